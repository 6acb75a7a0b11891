// The SwellHTTP module; see its types.
