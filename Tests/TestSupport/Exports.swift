// Test support carries the package's process launcher (``ChildProcess``, ``BlockingRead``,
// ``LaunchedServer``): every test target that starts a process imports only this module.
@_exported import RooftopLauncher
