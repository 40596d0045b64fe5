// swift-format-ignore-file: AlwaysUseLowerCamelCase
// (XCTest helpers are named XCTAssert…, as XCTest's own are.)

import XCTest

// XCTest helpers: the same checks and messages as the Swift Testing ones (see Expect.swift for
// how scenarios and policies are named), reported with XCTFail.

// MARK: The scenario's own expectations

/// Runs a scenario and fails when any of its `expect` lines fails — or, for a file with none,
/// when the run has a violation.
///
///     XCTAssertScenarioHolds(scenario: "two-device-acceptance")
@discardableResult
public func XCTAssertScenarioHolds(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.holds(nameOrPath, seed: seed, .spec(policy), near: "\(file)"), file, line)
}

/// Runs a scenario under a policy of your own and fails when any of its `expect` lines fails.
@discardableResult
public func XCTAssertScenarioHolds(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy, file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.holds(nameOrPath, seed: seed, .custom(policy), near: "\(file)"), file, line)
}

/// Runs a scenario with your app on every device and fails when any of its `expect` lines fails,
/// when the app refused intents of its own schema, or when the scenario cannot be bound to the
/// app's schema. A name is looked up next to the calling test file first, as for the other
/// helpers.
///
///     XCTAssertScenarioHolds(app: RemindersApp.self, scenario: "app-conflicting-save")
@discardableResult
public func XCTAssertScenarioHolds<App: SimApp>(
  app: App.Type, scenario nameOrPath: String, seed: UInt64? = nil, file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.holds(nameOrPath, seed: seed, .app(AppUnderTest(app)), near: "\(file)"), file, line)
}

/// Fails when an expectation of the report's scenario failed.
@discardableResult
public func XCTAssertScenarioHolds(_ report: RunReport, file: StaticString = #filePath, line: UInt = #line) -> Bool {
  _ = _fail((report, SimTestFailure.checkExpectations(report)), file, line)
  return report.passed
}

// MARK: No violations

/// Runs a scenario and fails when it has any violation, whatever its `expect` lines say, or when
/// the scenario or policy cannot be used (with the diagnostics).
///
///     XCTAssertNoViolations(scenario: "fat-note-lww", policy: "crdt")
@discardableResult
public func XCTAssertNoViolations(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.noViolations(nameOrPath, seed: seed, .spec(policy), near: "\(file)"), file, line)
}

/// Runs a scenario under a policy of your own and fails when it has any violation.
@discardableResult
public func XCTAssertNoViolations(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy, file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.noViolations(nameOrPath, seed: seed, .custom(policy), near: "\(file)"), file, line)
}

/// Fails when `report` has violations, with the anomalies and their explanations, the command
/// that replays the run, and what usually causes each kind.
///
///     XCTAssertNoViolations(ScenarioRunner.run(file).report)
@discardableResult
public func XCTAssertNoViolations(_ report: RunReport, file: StaticString = #filePath, line: UInt = #line) -> Bool {
  _ = _fail((report, SimTestFailure.check(report)), file, line)
  return report.violations.isEmpty
}

// MARK: A known loss

/// Runs a scenario and fails unless its violations are exactly `count` of `kind` and nothing else.
///
///     XCTAssertViolations(.lostEdit, count: 1, scenario: "fat-note-lww")
@discardableResult
public func XCTAssertViolations(
  _ kind: AnomalyKind, count: Int, scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil,
  file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.violations([kind: count], nameOrPath, seed: seed, .spec(policy), near: "\(file)"), file, line)
}

/// The same under a policy of your own.
@discardableResult
public func XCTAssertViolations(
  _ kind: AnomalyKind, count: Int, scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy,
  file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.violations([kind: count], nameOrPath, seed: seed, .custom(policy), near: "\(file)"), file, line)
}

/// Runs a scenario and fails unless its violations are exactly `expected` (a count per kind;
/// every kind not named must be absent).
@discardableResult
public func XCTAssertViolations(
  _ expected: [AnomalyKind: Int], scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil,
  file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.violations(expected, nameOrPath, seed: seed, .spec(policy), near: "\(file)"), file, line)
}

/// The same under a policy of your own.
@discardableResult
public func XCTAssertViolations(
  _ expected: [AnomalyKind: Int], scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy,
  file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.violations(expected, nameOrPath, seed: seed, .custom(policy), near: "\(file)"), file, line)
}

/// Fails unless `report`'s violations are exactly `expected`. Returns whether they were.
@discardableResult
public func XCTAssertViolations(_ expected: [AnomalyKind: Int], in report: RunReport, file: StaticString = #filePath, line: UInt = #line) -> Bool {
  let failure = SimTestFailure.check(report, expecting: expected)
  _ = _fail((report, failure), file, line)
  return failure == nil
}

// MARK: Fuzzing

/// Fuzzes a preset spec over `seeds` and fails at the first failing seed with its profile, its
/// anomalies, its shrunk scenario and the commands that replay it. `SIM_FUZZ_SEED` and
/// `SIM_FUZZ_SEEDS` replace the seeds, and `workload` names a scenario whose schema shapes the
/// workloads, as for the Swift Testing helper `expectFuzzPasses`.
///
///     XCTAssertFuzzPasses(policy: "append-only", seeds: 1...30)
@discardableResult
public func XCTAssertFuzzPasses(
  policy: String = "append-only", seeds: ClosedRange<UInt64>, workload: String? = nil, shape: WorkloadShape = WorkloadShape(),
  jobs: Int = 1, stopAtFirstFailure: Bool = true, file: StaticString = #filePath, line: UInt = #line
) -> FuzzSummary? {
  _failFuzz(
    _Checks.fuzz(
      .spec(policy), seeds: seeds, workload: workload, near: "\(file)", shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure,
      testName: nil), file, line)
}

/// Fuzzes a policy of your own over `seeds`.
///
///     XCTAssertFuzzPasses(policy: PreferLongerTitle(), seeds: 1...20)
@discardableResult
public func XCTAssertFuzzPasses(
  policy: some SyncPolicy, seeds: ClosedRange<UInt64>, workload: String? = nil, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, file: StaticString = #filePath, line: UInt = #line
) -> FuzzSummary? {
  _failFuzz(
    _Checks.fuzz(
      .custom(policy), seeds: seeds, workload: workload, near: "\(file)", shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure,
      testName: nil), file, line)
}

/// Fuzzes your app over `seeds` (see `expectFuzzPasses(app:seeds:)`) and fails at the first
/// failing seed.
///
///     XCTAssertFuzzPasses(app: NotesApp.self, seeds: 1...20)
@discardableResult
public func XCTAssertFuzzPasses<App: SimApp>(
  app: App.Type, seeds: ClosedRange<UInt64>, workload: String? = nil, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, file: StaticString = #filePath, line: UInt = #line
) -> FuzzSummary? {
  _failFuzz(
    _Checks.fuzz(
      .app(AppUnderTest(app)), seeds: seeds, workload: workload, near: "\(file)", shape: shape, jobs: jobs,
      stopAtFirstFailure: stopAtFirstFailure, testName: nil), file, line)
}

/// Runs a scenario with your app on every device and fails when it has any violation.
///
///     XCTAssertNoViolations(app: NotesApp.self, scenario: "app-conflicting-edits")
@discardableResult
public func XCTAssertNoViolations<App: SimApp>(
  app: App.Type, scenario nameOrPath: String, seed: UInt64? = nil, file: StaticString = #filePath, line: UInt = #line
) -> RunReport? {
  _fail(_Checks.noViolations(nameOrPath, seed: seed, .app(AppUnderTest(app)), near: "\(file)"), file, line)
}

// MARK: Failing

func _fail(_ outcome: (RunReport?, SimTestFailure?), _ file: StaticString, _ line: UInt) -> RunReport? {
  if let failure = outcome.1 { XCTFail(failure.message, file: file, line: line) }
  return outcome.0
}

func _failFuzz(_ outcome: (FuzzSummary?, SimTestFailure?), _ file: StaticString, _ line: UInt) -> FuzzSummary? {
  if let failure = outcome.1 { XCTFail(failure.message, file: file, line: line) }
  return outcome.0
}
