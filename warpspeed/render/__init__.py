"""Rendering typed results for people: text reports and CSV rows (``report``, ``compare_report``) and plots
(``plots``). The command line and the web page both render through it; it imports neither of them."""
