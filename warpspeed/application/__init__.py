"""The application layer: what the command line, the web page and the package's face (``warpspeed.estimate``,
``warpspeed.rank``, ...) call.

Requests come in as a kernel and a device given by name, file or object, with options as typed values;
:mod:`~warpspeed.application.resolve` turns the names into a :class:`~warpspeed.kernel.Kernel` and a
:class:`~warpspeed.device.Device`, and the model (:mod:`warpspeed.model`) and the studies
(:mod:`warpspeed.studies`), which take objects only, answer with typed results (Estimate, Ranking, what-if
points, Projection, Comparison). The text of the command line (sweeps, links, transfer sizes, candidates) is
read here too, into typed values. Rendering the results (text, CSV, plots) is :mod:`warpspeed.render`'s.

One module per request: ``estimating``, ``ranking``, ``whatif``, ``projection``, ``comparison``, ``timeview``.
"""
