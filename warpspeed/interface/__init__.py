"""The command line (``cli``). The text, CSV and plots it prints are rendered by ``warpspeed.render``, which the
web page (``warpspeed.web``) shares; the page does not import the command line."""
