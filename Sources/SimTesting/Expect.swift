import SimSyncEngine
import Testing

// Swift Testing helpers: each records one issue whose comment is ``SimTestFailure/message``.
//
// A scenario is named as `sim-cli` names it: `scenarios/NAME.scenario` next to the calling test
// file or in any folder above it up to the package root (whatever the working directory), then the built-in ones; or a
// path, taken from the test file's folder first. A policy is a preset spec as text
// (`policy: "field-lww-hlc delete=hard"`) or a policy of your own (`policy: PreferLongerTitle()`);
// without one, the scenario's own `policy` line. A scenario that cannot be loaded or parsed, or a
// spec that does not parse, is recorded as an issue with its diagnostics.

// MARK: The scenario's own expectations

/// Runs a scenario and records an issue when any of its `expect` lines fails — or, for a file
/// with none, when the run has a violation (the implied `expect no violations`). The issue names
/// each failed expectation with what was found, then the anomalies and the reproduction.
///
///     expectScenarioHolds(scenario: "two-device-acceptance")
///     expectScenarioHolds(scenario: "fat-note-lww", policy: "crdt")
///
/// Returns the report, or nil when the scenario or policy could not be used.
@discardableResult
public func expectScenarioHolds(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.holds(nameOrPath, seed: seed, .spec(policy), near: filePath), sourceLocation)
}

/// Runs a scenario under a policy of your own and records an issue when any of its `expect`
/// lines fails.
///
///     expectScenarioHolds(scenario: "concurrent-titles", policy: PreferLongerTitle())
@discardableResult
public func expectScenarioHolds(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.holds(nameOrPath, seed: seed, .custom(policy), near: filePath), sourceLocation)
}

/// Runs a scenario with your app and its `SyncEngine` on every device and records an issue when
/// any of its `expect` lines fails — the lesson's own checks (`expect n1.title == "…"`,
/// `expect converged`), not only its violations — or when the app refused intents of its own
/// schema, or the scenario cannot be bound to the app's schema (the role it lacks is named).
///
///     expectScenarioHolds(app: RemindersApp.self, scenario: "app-conflicting-save")
///
/// Returns the report, or nil when the scenario could not be loaded.
@discardableResult
public func expectScenarioHolds<App: SimApp>(
  app: App.Type, scenario nameOrPath: String, seed: UInt64? = nil, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.holds(nameOrPath, seed: seed, .app(AppUnderTest(app)), near: filePath), sourceLocation)
}

/// Records an issue when an expectation of the report's scenario failed. Returns whether all held.
///
///     expectScenarioHolds(ScenarioRunner.run(file).report)
@discardableResult
public func expectScenarioHolds(_ report: RunReport, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Bool {
  _ = _record((report, SimTestFailure.checkExpectations(report)), sourceLocation)
  return report.passed
}

// MARK: No violations, whatever the file expects

/// Runs a scenario and records an issue when it has any violation, whatever its `expect` lines
/// say: the anomalies with their explanations, the command that replays the run, and what
/// usually causes each kind.
///
///     expectNoViolations(scenario: "fat-note-lww", policy: "crdt")
///
/// Returns the report, or nil when the scenario or policy could not be used.
@discardableResult
public func expectNoViolations(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.noViolations(nameOrPath, seed: seed, .spec(policy), near: filePath), sourceLocation)
}

/// Runs a scenario under a policy of your own and records an issue when it has any violation.
@discardableResult
public func expectNoViolations(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.noViolations(nameOrPath, seed: seed, .custom(policy), near: filePath), sourceLocation)
}

/// Runs a scenario with your app and its `SyncEngine` on every device and records an issue when
/// it has any violation (the scenario's values must be unique per intent: see
/// `ScenarioRunner.run(_:app:)`).
///
///     expectNoViolations(app: NotesApp.self, scenario: "two-devices-edit")
@discardableResult
public func expectNoViolations<App: SimApp>(
  app: App.Type, scenario nameOrPath: String, seed: UInt64? = nil, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.noViolations(nameOrPath, seed: seed, .app(AppUnderTest(app)), near: filePath), sourceLocation)
}

/// Runs a scenario twice with your app, with the same seed, and records an issue at the first
/// step where the app did something different: what it showed, kept pending, sent or wrote to
/// disk after a call into its code. That is where it read something the simulator does not
/// control — `Date()` instead of `SimDevice.now`, `UUID()` or a system random generator instead
/// of `SimDevice.random`, a `Set` encoded in its iteration order. (Both runs are in the test's
/// process, where Swift seeds hashing once; `sim-cli run --app NAME --check-determinism` runs the
/// second in another process.)
///
///     expectDeterministic(app: NotesApp.self, scenario: "app-edit-under-fetch")
@discardableResult
public func expectDeterministic<App: SimApp>(
  app: App.Type, scenario nameOrPath: String, seed: UInt64? = nil, filePath: String = #filePath,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> DeterminismCheck? {
  let outcome = _Checks.deterministic(nameOrPath, seed: seed, AppUnderTest(app), near: filePath)
  if let failure = outcome.1 { Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation) }
  return outcome.0
}

/// Records an issue when `report` has violations. Returns whether it had none.
///
///     expectNoViolations(ScenarioRunner.run(file).report)
@discardableResult
public func expectNoViolations(_ report: RunReport, sourceLocation: Testing.SourceLocation = #_sourceLocation) -> Bool {
  _ = _record((report, SimTestFailure.check(report)), sourceLocation)
  return report.violations.isEmpty
}

// MARK: A known loss

/// Runs a scenario and records an issue unless its violations are exactly `count` of `kind` and
/// nothing else: a test that pins down what a design is known to lose, and fails when the loss
/// changes — a fix, or a new kind of loss.
///
///     expectViolations(.lostEdit, count: 1, scenario: "fat-note-lww")
@discardableResult
public func expectViolations(
  _ kind: AnomalyKind, count: Int, scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil,
  filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.violations([kind: count], nameOrPath, seed: seed, .spec(policy), near: filePath), sourceLocation)
}

/// The same under a policy of your own.
@discardableResult
public func expectViolations(
  _ kind: AnomalyKind, count: Int, scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy,
  filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.violations([kind: count], nameOrPath, seed: seed, .custom(policy), near: filePath), sourceLocation)
}

/// Runs a scenario and records an issue unless its violations are exactly `expected` (a count
/// per kind; every kind not named must be absent).
///
///     expectViolations([.lostEdit: 1, .resurrection: 1], scenario: "hard-delete-retry", policy: "hard-delete")
@discardableResult
public func expectViolations(
  _ expected: [AnomalyKind: Int], scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil,
  filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.violations(expected, nameOrPath, seed: seed, .spec(policy), near: filePath), sourceLocation)
}

/// The same under a policy of your own.
@discardableResult
public func expectViolations(
  _ expected: [AnomalyKind: Int], scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy,
  filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  _record(_Checks.violations(expected, nameOrPath, seed: seed, .custom(policy), near: filePath), sourceLocation)
}

/// Records an issue unless `report`'s violations are exactly `expected`. Returns whether they were.
@discardableResult
public func expectViolations(_ expected: [AnomalyKind: Int], in report: RunReport, sourceLocation: Testing.SourceLocation = #_sourceLocation)
  -> Bool
{
  let failure = SimTestFailure.check(report, expecting: expected)
  _ = _record((report, failure), sourceLocation)
  return failure == nil
}

// MARK: Fuzzing

/// Fuzzes a preset spec over `seeds` — each seed a random workload under its own fault profile —
/// and records an issue for the first failing seed: its profile, its anomalies, its shrunk
/// scenario (ready to save as a `.scenario` file) and the commands that replay it.
///
///     expectFuzzPasses(policy: "append-only", seeds: 1...30)
///
/// `SIM_FUZZ_SEED=N swift test --filter NAME` replays one seed instead of the range (the failure
/// message prints the command); `SIM_FUZZ_SEEDS=A...B` runs another range, for a nightly job.
///
/// - Parameters:
///   - policy: a preset and overrides (`"field-lww-hlc delete=hard"`).
///   - seeds: the seeds to run, each its own workload and fault profile.
///   - workload: a scenario, named or by path as for ``expectScenarioHolds(scenario:seed:policy:filePath:sourceLocation:)-(_,_,String?,_,_)``,
///     whose devices and schema shape the workloads — your own schema; nil: the built-in Note /
///     Stroke / Preference workload.
///   - shape: the intents per seed, and the device counts of the built-in workload.
///   - jobs: parallel workers; the outcome is the same for any number.
///   - stopAtFirstFailure: stop at the first failing seed (the default keeps tests fast).
///   - filePath: the calling test file, from which scenario names are looked up.
///   - sourceLocation: where the issue is recorded (the caller, by default).
/// - Returns: the summary, or nil when `policy` or the environment's seeds do not parse.
@discardableResult
public func expectFuzzPasses(
  policy: String = "append-only", seeds: ClosedRange<UInt64>, workload: String? = nil, shape: WorkloadShape = WorkloadShape(),
  jobs: Int = 1, stopAtFirstFailure: Bool = true, filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> FuzzSummary? {
  _recordFuzz(
    _Checks.fuzz(
      .spec(policy), seeds: seeds, workload: workload, near: filePath, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure,
      testName: _testName()), sourceLocation)
}

/// Fuzzes a policy of your own over `seeds`; see the preset form.
///
///     expectFuzzPasses(policy: PreferLongerTitle(), seeds: 1...20)
///     expectFuzzPasses(policy: PreferLongerTitle(), seeds: 1...20, workload: "notes")   // scenarios/notes.scenario's schema
@discardableResult
public func expectFuzzPasses(
  policy: some SyncPolicy, seeds: ClosedRange<UInt64>, workload: String? = nil, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> FuzzSummary? {
  _recordFuzz(
    _Checks.fuzz(
      .custom(policy), seeds: seeds, workload: workload, near: filePath, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure,
      testName: _testName()), sourceLocation)
}

/// Fuzzes your app over `seeds` — each seed a random workload for apps (values unique per intent)
/// under its own fault profile, with your app and its `SyncEngine` on every device — and records
/// an issue for the first failing seed: its profile, its anomalies, its shrunk scenario and the
/// commands that replay it.
///
///     expectFuzzPasses(app: NotesApp.self, seeds: 1...20)
///
/// `SIM_FUZZ_SEED=N` and `SIM_FUZZ_SEEDS=A...B` choose other seeds, as for a policy.
@discardableResult
public func expectFuzzPasses<App: SimApp>(
  app: App.Type, seeds: ClosedRange<UInt64>, workload: String? = nil, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> FuzzSummary? {
  _recordFuzz(
    _Checks.fuzz(
      .app(AppUnderTest(app)), seeds: seeds, workload: workload, near: filePath, shape: shape, jobs: jobs,
      stopAtFirstFailure: stopAtFirstFailure, testName: _testName()), sourceLocation)
}

// MARK: Recording

/// Records the failure, if any, as one issue; returns the report.
func _record(_ outcome: (RunReport?, SimTestFailure?), _ sourceLocation: Testing.SourceLocation) -> RunReport? {
  if let failure = outcome.1 { Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation) }
  return outcome.0
}

func _recordFuzz(_ outcome: (FuzzSummary?, SimTestFailure?), _ sourceLocation: Testing.SourceLocation) -> FuzzSummary? {
  guard let failure = outcome.1 else { return outcome.0 }
  Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
  #if compiler(>=6.2)
    // With `swift test --attachments-path DIR`, the minimal scenario is saved as a file.
    if let shrunk = outcome.0?.shrunk {
      Attachment.record(shrunk.text, named: shrunk.file.source, sourceLocation: sourceLocation)
    }
  #endif
  return outcome.0
}

/// The running test's name without its parameter list, for `swift test --filter`.
func _testName() -> String? {
  guard let name = Test.current?.name else { return nil }
  return name.firstIndex(of: "(").map { String(name[..<$0]) } ?? name
}
