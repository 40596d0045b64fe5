/// Why a helper failed, as a value; ``message`` is the one renderer both test frameworks use.
///
///     if let failure = SimTestFailure.check(report) { print(failure.message) }
public enum SimTestFailure: Error, Sendable, CustomStringConvertible {
  /// A run reported violations. `customPolicy` is the policy it ran with, when it was not a preset.
  case violations(RunReport, customPolicy: (any SyncPolicy)?)
  /// A fuzzed seed failed.
  case fuzzFailed(FuzzSummary)
  /// A scenario named or given by path could not be loaded or did not parse.
  case scenarioNotLoaded(nameOrPath: String, error: Scenario.LoadError)
  /// A policy spec did not parse.
  case invalidPolicy(spec: String, error: PolicySpec.ParseError)

  public var description: String { message }

  /// The failure for `report`, or nil when it has no violations (informational anomalies and
  /// the scenario's own `expect` lines do not count).
  public static func check(_ report: RunReport, customPolicy: (any SyncPolicy)? = nil) -> SimTestFailure? {
    report.violations.isEmpty ? nil : .violations(report, customPolicy: customPolicy)
  }

  /// The failure for `summary`, or nil when every seed passed.
  public static func check(_ summary: FuzzSummary) -> SimTestFailure? {
    summary.passed ? nil : .fuzzFailed(summary)
  }

  /// Loads and runs a scenario by name or path — found next to `testFile` (see the helpers),
  /// else built in — with another seed or policy if given: the report, or the failure to record
  /// instead.
  public static func run(
    scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, customPolicy: (any SyncPolicy)? = nil,
    near testFile: String = #filePath
  ) -> Swift.Result<RunReport, SimTestFailure> {
    var spec: PolicySpec?
    if let policy {
      switch PolicySpec.parse(policy) {
      case .success(let s): spec = s
      case .failure(let error): return .failure(.invalidPolicy(spec: policy, error: error))
      }
    }
    let file: ScenarioFile
    do {
      file = try ScenarioLookup.load(nameOrPath, near: testFile)
    } catch {
      return .failure(.scenarioNotLoaded(nameOrPath: nameOrPath, error: error))
    }
    return .success(ScenarioRunner.run(file, seed: seed, policy: spec, customPolicy: customPolicy).report)
  }

  /// Fuzzes with the policy as text: the summary, or the failure to record instead of it.
  static func fuzz(
    policy: String, customPolicy: (any SyncPolicy)?, seeds: ClosedRange<UInt64>, shape: WorkloadShape, jobs: Int,
    stopAtFirstFailure: Bool
  ) -> Swift.Result<FuzzSummary, SimTestFailure> {
    switch PolicySpec.parse(policy) {
    case .failure(let error):
      return .failure(.invalidPolicy(spec: policy, error: error))
    case .success(let spec):
      let summary = SimTesting.fuzz(
        policy: spec, customPolicy: customPolicy, seeds: seeds, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure)
      return summary.passed ? .success(summary) : .failure(.fuzzFailed(summary))
    }
  }
}
