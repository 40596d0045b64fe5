// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (XCTest helpers are named XCTAssert…, as XCTest's own are.)

import XCTest

// XCTest helpers: the same checks and messages as the Swift Testing ones, reported with XCTFail.

/// Fails when `report` has violations, with the anomalies and their explanations, the command
/// that replays the run, and what usually causes each kind.
///
///     XCTAssertNoViolations(ScenarioRunner.run(file).report)
public func XCTAssertNoViolations(
  _ report: RunReport, customPolicy: (any SyncPolicy)? = nil, file: StaticString = #filePath, line: UInt = #line
) {
  guard let failure = SimTestFailure.check(report, customPolicy: customPolicy) else { return }
  XCTFail(failure.message, file: file, line: line)
}

/// Loads a scenario by name or path, runs it, and fails when it has violations, or when the
/// scenario or policy cannot be used (with the diagnostics).
///
///     XCTAssertNoViolations(scenario: "two-device-acceptance")
@discardableResult
public func XCTAssertNoViolations(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, customPolicy: (any SyncPolicy)? = nil,
  file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  switch SimTestFailure.run(scenario: nameOrPath, seed: seed, policy: policy, customPolicy: customPolicy, near: "\(file)") {
  case .success(let report):
    XCTAssertNoViolations(report, customPolicy: customPolicy, file: file, line: line)
    return report
  case .failure(let failure):
    XCTFail(failure.message, file: file, line: line)
    return nil
  }
}

/// Fuzzes a policy over `seeds` and fails at the first failing seed with its profile, its
/// anomalies, its shrunk scenario and the commands that replay it.
///
///     XCTAssertFuzzPasses(policy: "append-only", seeds: 1...30)
@discardableResult
public func XCTAssertFuzzPasses(
  policy: String = "append-only", customPolicy: (any SyncPolicy)? = nil, seeds: ClosedRange<UInt64>,
  shape: WorkloadShape = WorkloadShape(), jobs: Int = 1, stopAtFirstFailure: Bool = true,
  file: StaticString = #filePath, line: UInt = #line
) -> FuzzSummary? {
  switch SimTestFailure.fuzz(
    policy: policy, customPolicy: customPolicy, seeds: seeds, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure)
  {
  case .success(let summary):
    return summary
  case .failure(let failure):
    XCTFail(failure.message, file: file, line: line)
    if case .fuzzFailed(let summary) = failure { return summary }
    return nil
  }
}
