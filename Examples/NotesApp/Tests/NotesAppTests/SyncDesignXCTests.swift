import SimTesting
import XCTest

final class SyncDesignXCTests: XCTestCase {
  func testSermonNotesSurviveTwoOfflineDevices() {
    XCTAssertScenarioHolds(scenario: "sermon-notes")
  }

  func testOurOwnPolicyLosesNothing() {
    XCTAssertFuzzPasses(policy: PreferLongerTitle(), seeds: 1...10, workload: "sermon-notes")
  }
}
