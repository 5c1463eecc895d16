"""cef: Context Engineering Framework."""
