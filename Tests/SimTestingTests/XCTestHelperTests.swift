import SimTesting
import XCTest

/// The XCTest helpers: the same checks and the same messages as the Swift Testing ones.
final class XCTestHelperTests: XCTestCase {
  func testTheEssaysDesignLosesNothing() {
    XCTAssertNoViolations(scenario: "two-device-acceptance")
  }

  func testAppendOnlySurvivesRandomWorkloads() {
    XCTAssertFuzzPasses(policy: "append-only", seeds: 1...5)
  }

  func testMyPolicySurvivesRandomWorkloads() {
    XCTAssertFuzzPasses(policy: PreferLongerTitle(), seeds: 1...5)
  }

  /// swift-corelibs-xctest has no `XCTExpectFailure`, so the failing direction is checked on the
  /// shared message builder, which is what `XCTAssertNoViolations` passes to `XCTFail`.
  func testTheFailureMessageOfALossyRunTeaches() throws {
    let report = ScenarioRunner.run(try Scenario.load("fat-note-lww")).report
    let message = try XCTUnwrap(SimTestFailure.check(report)?.message)
    XCTAssertTrue(message.hasPrefix("fat-note-lww under cloudkit-default (seed 1) lost data: 1 lost-edit\n"))
    XCTAssertTrue(message.contains(try XCTUnwrap(report.violations.first?.explanation)))
    XCTAssertTrue(message.contains("sim-cli run fat-note-lww --seed 1 --policy cloudkit-default"))
  }

  #if !canImport(Darwin)
    /// Failures recorded while `capturing` is set, instead of failing the test.
    private var captured: [String]?

    override func recordFailure(withDescription description: String, inFile filePath: String, atLine lineNumber: Int, expected: Bool) {
      if captured != nil {
        captured!.append(description)
      } else {
        super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
      }
    }

    /// On Linux, XCTest reports a failure through `recordFailure`, so a test can intercept it and
    /// check that the helper really fails, with the shared message.
    func testXCTAssertNoViolationsFailsWithTheSharedMessage() throws {
      let report = ScenarioRunner.run(try Scenario.load("fat-note-lww")).report
      captured = []
      XCTAssertNoViolations(report)
      let failures = captured ?? []
      captured = nil
      XCTAssertEqual(failures.count, 1)
      let message = try XCTUnwrap(SimTestFailure.check(report)?.message)
      XCTAssertTrue(failures.first?.contains(message) == true, failures.first ?? "")
    }
  #endif
}
