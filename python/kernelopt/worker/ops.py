"""The worker's op table: name -> function(args dict) -> result dict."""
TABLE = {}
