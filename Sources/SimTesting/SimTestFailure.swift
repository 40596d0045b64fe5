import Foundation

/// Why a helper failed, as a value; ``message`` is the one renderer both test frameworks use.
///
///     if let failure = SimTestFailure.checkExpectations(report) { print(failure.message) }
public enum SimTestFailure: Error, Sendable, CustomStringConvertible {
  /// A run reported violations where none were allowed.
  case violations(RunReport)
  /// Some of the scenario's own `expect` lines (or the implied `expect no violations`) failed.
  case expectationsFailed(RunReport)
  /// A run's violations were not the ones the test expects: `expected` holds the count the test
  /// named for each kind (every other violation kind is expected to be absent).
  case unexpectedViolations(RunReport, expected: [AnomalyKind: Int])
  /// A fuzzed seed failed.
  case fuzzFailed(FuzzSummary)
  /// A scenario named or given by path could not be loaded or did not parse.
  case scenarioNotLoaded(nameOrPath: String, error: Scenario.LoadError)
  /// A policy spec did not parse.
  case invalidPolicy(spec: String, error: PolicySpec.ParseError)
  /// The scenario named as a fuzz workload cannot shape one (it declares no record types).
  case unusableWorkload(nameOrPath: String, reason: String)
  /// An environment variable the helpers read (`SIM_FUZZ_SEED`, `SIM_FUZZ_SEEDS`) holds
  /// something they cannot use.
  case invalidEnvironment(variable: String, value: String, reason: String)
  /// Two runs of one seed with a user's app did not behave the same.
  case notDeterministic(DeterminismCheck, app: String, scenario: String, seed: UInt64)

  public var description: String { message }

  /// The failure for `report`, or nil when it has no violations (informational anomalies and
  /// the scenario's own `expect` lines do not count: see ``checkExpectations(_:)``).
  public static func check(_ report: RunReport) -> SimTestFailure? {
    if !report.violations.isEmpty { return .violations(report) }
    // With an app: its code could not run, it refused intents of its own schema, or the
    // scenario could not be bound to its schema — a run that tests nothing is no pass.
    if report.expectations.contains(where: { $0.line == 0 && !$0.passed && $0.text != "expect no violations" }) {
      return .expectationsFailed(report)
    }
    return nil
  }

  /// The failure for `report`, or nil when every expectation of its scenario held — the file's
  /// `expect` lines, or the implied `expect no violations` of a file without any.
  public static func checkExpectations(_ report: RunReport) -> SimTestFailure? {
    report.passed ? nil : .expectationsFailed(report)
  }

  /// The failure for `report`, or nil when its violations are exactly `expected`: that many of
  /// each kind named, and none of any other violation kind.
  public static func check(_ report: RunReport, expecting expected: [AnomalyKind: Int]) -> SimTestFailure? {
    let matches = AnomalyKind.allCases.filter(\.isViolation).allSatisfy { report.count($0) == (expected[$0] ?? 0) }
    return matches ? nil : .unexpectedViolations(report, expected: expected)
  }

  /// The failure for `summary`, or nil when every seed passed.
  public static func check(_ summary: FuzzSummary) -> SimTestFailure? {
    summary.passed ? nil : .fuzzFailed(summary)
  }

  /// Loads and runs a scenario by name or path — found next to `testFile` (see
  /// ``expectScenarioHolds(scenario:seed:policy:filePath:sourceLocation:)-(_,_,String?,_,_)``), else
  /// built in — with another seed or preset spec if given: the report, or the failure to record
  /// instead.
  public static func run(
    scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, near testFile: String = #filePath
  ) -> Swift.Result<RunReport, SimTestFailure> {
    var spec: PolicySpec?
    if let policy {
      switch PolicySpec.parse(policy) {
      case .success(let s): spec = s
      case .failure(let error): return .failure(.invalidPolicy(spec: policy, error: error))
      }
    }
    return _load(nameOrPath, near: testFile).map { ScenarioRunner.run($0, seed: seed, policy: spec).report }
  }

  /// Loads and runs a scenario by name or path under a policy of your own.
  public static func run(
    scenario nameOrPath: String, seed: UInt64? = nil, policy: some SyncPolicy, near testFile: String = #filePath
  ) -> Swift.Result<RunReport, SimTestFailure> {
    _load(nameOrPath, near: testFile).map { ScenarioRunner.run($0, seed: seed, policy: policy).report }
  }

  static func _load(_ nameOrPath: String, near testFile: String) -> Swift.Result<ScenarioFile, SimTestFailure> {
    do {
      return .success(try ScenarioLookup.load(nameOrPath, near: testFile))
    } catch {
      return .failure(.scenarioNotLoaded(nameOrPath: nameOrPath, error: error))
    }
  }
}

/// How a helper was asked to choose its policy: a preset spec as text (nil: the file's own), or
/// a policy of your own.
enum _PolicyChoice {
  case spec(String?)
  case custom(any SyncPolicy)
  /// The user's app on every device.
  case app(AppUnderTest)

  func run(_ nameOrPath: String, seed: UInt64?, near testFile: String) -> Swift.Result<RunReport, SimTestFailure> {
    switch self {
    case .spec(let text): SimTestFailure.run(scenario: nameOrPath, seed: seed, policy: text, near: testFile)
    case .custom(let policy): SimTestFailure.run(scenario: nameOrPath, seed: seed, policy: policy, near: testFile)
    case .app(let app): SimTestFailure._load(nameOrPath, near: testFile).map { ScenarioRunner.run($0, app: app, seed: seed).report }
    }
  }
}

/// The checks behind the helpers of both frameworks: each returns the failure to record, or nil.
enum _Checks {
  static func holds(_ name: String, seed: UInt64?, _ policy: _PolicyChoice, near file: String) -> (RunReport?, SimTestFailure?) {
    switch policy.run(name, seed: seed, near: file) {
    case .success(let report): (report, SimTestFailure.checkExpectations(report))
    case .failure(let failure): (nil, failure)
    }
  }

  static func deterministic(_ name: String, seed: UInt64?, _ app: AppUnderTest, near file: String) -> (DeterminismCheck?, SimTestFailure?) {
    switch SimTestFailure._load(name, near: file) {
    case .success(let scenario):
      let check = ScenarioRunner.checkDeterminism(scenario, app: app, seed: seed)
      return (check, check.deterministic ? nil : .notDeterministic(check, app: app.name, scenario: name, seed: seed ?? scenario.seed))
    case .failure(let failure): return (nil, failure)
    }
  }

  static func noViolations(_ name: String, seed: UInt64?, _ policy: _PolicyChoice, near file: String) -> (RunReport?, SimTestFailure?) {
    switch policy.run(name, seed: seed, near: file) {
    case .success(let report): (report, SimTestFailure.check(report))
    case .failure(let failure): (nil, failure)
    }
  }

  static func violations(
    _ expected: [AnomalyKind: Int], _ name: String, seed: UInt64?, _ policy: _PolicyChoice, near file: String
  ) -> (RunReport?, SimTestFailure?) {
    switch policy.run(name, seed: seed, near: file) {
    case .success(let report): (report, SimTestFailure.check(report, expecting: expected))
    case .failure(let failure): (nil, failure)
    }
  }

  /// Fuzzes with the policy as given, the seeds possibly replaced by `SIM_FUZZ_SEED` or
  /// `SIM_FUZZ_SEEDS`: the summary (nil when the policy or the environment is unusable), and the
  /// failure to record.
  static func fuzz(
    _ policy: _PolicyChoice, seeds: ClosedRange<UInt64>, workload: String? = nil, near testFile: String = "", shape: WorkloadShape,
    jobs: Int, stopAtFirstFailure: Bool, testName: String?, environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> (FuzzSummary?, SimTestFailure?) {
    var shape = shape
    if let workload {
      switch SimTestFailure._load(workload, near: testFile) {
      case .success(let file):
        guard !file.schema.types.isEmpty else {
          return (nil, .unusableWorkload(nameOrPath: workload, reason: "it declares no record types, and a workload makes records of its types"))
        }
        shape.base = file
      case .failure(let failure): return (nil, failure)
      }
    }
    let chosen: FuzzSeeds
    switch FuzzSeeds.resolve(seeds, environment: environment) {
    case .success(let s): chosen = s
    case .failure(let failure): return (nil, failure)
    }
    var summary: FuzzSummary
    switch policy {
    case .spec(let text):
      let spec: PolicySpec
      switch PolicySpec.parse(text ?? "append-only") {
      case .success(let s): spec = s
      case .failure(let error): return (nil, .invalidPolicy(spec: text ?? "append-only", error: error))
      }
      summary = SimTesting.fuzz(policy: spec, seeds: chosen.range, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure)
    case .custom(let custom):
      summary = _fuzz(custom, seeds: chosen.range, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure)
    case .app(let app):
      summary = SimTesting._fuzz(
        FuzzCampaign(
          shape: shape, app: app, seeds: SeedPlan(lower: chosen.range.lowerBound, upper: chosen.range.upperBound), jobs: jobs, shrink: false),
        seeds: chosen.range, stopAtFirstFailure: stopAtFirstFailure, shrinkRuns: 3_000)
    }
    summary.replayedFrom = chosen.variable
    summary.testName = testName
    return (summary, SimTestFailure.check(summary))
  }

  static func _fuzz(_ policy: some SyncPolicy, seeds: ClosedRange<UInt64>, shape: WorkloadShape, jobs: Int, stopAtFirstFailure: Bool)
    -> FuzzSummary
  {
    SimTesting.fuzz(policy: policy, seeds: seeds, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure)
  }
}

/// The seeds a fuzz helper runs: the test's own range, or the one an environment variable gives
/// — `SIM_FUZZ_SEED=N` replays one seed (a failure message prints it), `SIM_FUZZ_SEEDS=A...B`
/// runs another range (a nightly job's longer campaign).
struct FuzzSeeds {
  var range: ClosedRange<UInt64>
  /// The variable that chose the seeds, when one did.
  var variable: String?

  static func resolve(_ own: ClosedRange<UInt64>, environment: [String: String]) -> Swift.Result<FuzzSeeds, SimTestFailure> {
    let one = environment["SIM_FUZZ_SEED"].flatMap { $0.isEmpty ? nil : $0 }
    let many = environment["SIM_FUZZ_SEEDS"].flatMap { $0.isEmpty ? nil : $0 }
    if one != nil && many != nil {
      return .failure(
        .invalidEnvironment(
          variable: "SIM_FUZZ_SEED", value: one!, reason: "SIM_FUZZ_SEEDS is set too; set one of them (a seed to replay, or a range to run)"))
    }
    if let one {
      guard let seed = _number(one) else {
        return .failure(.invalidEnvironment(variable: "SIM_FUZZ_SEED", value: one, reason: "expected a seed: digits only, e.g. SIM_FUZZ_SEED=17"))
      }
      return .success(FuzzSeeds(range: seed...seed, variable: "SIM_FUZZ_SEED=\(seed)"))
    }
    if let many {
      let parts = many.components(separatedBy: many.contains("...") ? "..." : "..")
      guard parts.count == 2, let a = _number(parts[0]), let b = _number(parts[1]), a <= b else {
        return .failure(
          .invalidEnvironment(
            variable: "SIM_FUZZ_SEEDS", value: many, reason: "expected a range of seeds A...B with A ≤ B, e.g. SIM_FUZZ_SEEDS=1...100000"))
      }
      return .success(FuzzSeeds(range: a...b, variable: "SIM_FUZZ_SEEDS=\(a)...\(b)"))
    }
    return .success(FuzzSeeds(range: own, variable: nil))
  }

  static func _number(_ text: String) -> UInt64? {
    let t = text.trimmingCharacters(in: .whitespaces)
    guard !t.isEmpty, t.count <= 20, t.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.numericType != nil }) else { return nil }
    return UInt64(t)
  }
}
