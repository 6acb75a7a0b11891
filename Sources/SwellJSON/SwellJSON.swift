// The SwellJSON module; see its types.
