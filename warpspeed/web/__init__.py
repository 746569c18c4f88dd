"""``warpspeed serve``: a local web page for what-if questions (a kernel typed or picked, a GPU with overrides,
a launch or a ranking), answered with the same numbers as the command line. Needs ``pip install -e ".[web]"``."""
