// The SwellPipeline module; see its types.
