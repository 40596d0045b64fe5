// Test helpers for conflict-sim: assert that a run loses nothing, and fuzz a policy inside a
// test, in Swift Testing (`expectNoViolations`, `expectFuzzPasses`) or XCTest
// (`XCTAssertNoViolations`, `XCTAssertFuzzPasses`). Both report through one message builder,
// ``SimTestFailure``, so a failure reads the same in either framework.
//
// `import SimTesting` is all a test file needs: the engine's modules come with it, so that a
// test can write its own ``SyncPolicy`` and read a ``RunReport``.

@_exported import Replica
@_exported import Scenarios
@_exported import SimSyncEngine
@_exported import Simulator
