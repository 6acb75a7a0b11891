// Test helpers shared by the test targets: the loopback HTTP server.
