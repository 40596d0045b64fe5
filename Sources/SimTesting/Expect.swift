import Testing

// Swift Testing helpers: each records one issue whose comment is ``SimTestFailure/message``.

/// Records an issue when `report` has violations: the anomalies with their explanations, the
/// command that replays the run, and what usually causes each kind.
///
///     let report = ScenarioRunner.run(try Scenario.load("two-device-acceptance")).report
///     expectNoViolations(report)
///
/// Pass `customPolicy` when the run used your own `SyncPolicy`, so the message says how to
/// replay it. Returns whether the report had no violations.
@discardableResult
public func expectNoViolations(
  _ report: RunReport, customPolicy: (any SyncPolicy)? = nil, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> Bool {
  guard let failure = SimTestFailure.check(report, customPolicy: customPolicy) else { return true }
  Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
  return false
}

/// Loads a scenario by name or path, runs it with its own seed and policy or the ones given, and
/// records an issue when it has violations. A name is looked for as `scenarios/NAME.scenario`
/// next to the calling test file or in any folder above it (whatever the working directory),
/// then among the built-in scenarios; a relative path is taken from the test file's folder first.
/// A scenario that cannot be loaded or parsed, or a policy spec that does not parse, is recorded
/// as an issue with its diagnostics.
///
///     expectNoViolations(scenario: "two-device-acceptance")
///     expectNoViolations(scenario: "fat-note-lww", policy: "crdt")
///
/// Returns the report, or nil when the scenario or policy could not be used.
@discardableResult
public func expectNoViolations(
  scenario nameOrPath: String, seed: UInt64? = nil, policy: String? = nil, customPolicy: (any SyncPolicy)? = nil,
  filePath: String = #filePath, sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> RunReport? {
  switch SimTestFailure.run(scenario: nameOrPath, seed: seed, policy: policy, customPolicy: customPolicy, near: filePath) {
  case .success(let report):
    expectNoViolations(report, customPolicy: customPolicy, sourceLocation: sourceLocation)
    return report
  case .failure(let failure):
    Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    return nil
  }
}

/// Fuzzes a policy over `seeds` — each seed a random workload under its own fault profile — and
/// records an issue for the first failing seed: its profile, its anomalies, its shrunk scenario
/// (ready to save as a `.scenario` file) and the commands that replay it.
///
///     expectFuzzPasses(policy: "append-only", seeds: 1...30)
///     expectFuzzPasses(policy: "field-lww-hlc", customPolicy: PreferLongerTitle(), seeds: 1...20)
///
/// - Parameters:
///   - policy: a preset and overrides (`"field-lww-hlc delete=hard"`); with `customPolicy`, the
///     preset written into the generated scenarios.
///   - customPolicy: your own policy, fuzzed instead of the preset.
///   - seeds: the seeds to run, each its own workload and fault profile.
///   - shape: what the workloads look like (devices, schema, intents per seed).
///   - jobs: parallel workers; the outcome is the same for any number.
///   - stopAtFirstFailure: stop at the first failing seed (the default keeps tests fast).
///   - sourceLocation: where the issue is recorded (the caller, by default).
/// - Returns: the summary, or nil when `policy` does not parse.
@discardableResult
public func expectFuzzPasses(
  policy: String = "append-only", customPolicy: (any SyncPolicy)? = nil, seeds: ClosedRange<UInt64>,
  shape: WorkloadShape = WorkloadShape(), jobs: Int = 1, stopAtFirstFailure: Bool = true,
  sourceLocation: Testing.SourceLocation = #_sourceLocation
) -> FuzzSummary? {
  let result = SimTestFailure.fuzz(
    policy: policy, customPolicy: customPolicy, seeds: seeds, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure)
  switch result {
  case .success(let summary):
    return summary
  case .failure(let failure):
    Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    guard case .fuzzFailed(let summary) = failure else { return nil }
    #if compiler(>=6.2)
      // With `swift test --attachments-path DIR`, the minimal scenario is saved as a file.
      if let shrunk = summary.shrunk {
        Attachment.record(shrunk.text, named: shrunk.file.source, sourceLocation: sourceLocation)
      }
    #endif
    return summary
  }
}
