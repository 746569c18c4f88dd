"""What users see: the command line, the text reports and the plots (the web page is ``warpspeed.web``)."""
