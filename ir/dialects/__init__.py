"""Python modules for dialects that have no Python bindings of their own (see ``enzyme``)."""
