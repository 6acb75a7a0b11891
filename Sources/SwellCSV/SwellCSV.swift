// The SwellCSV module; see its types.
