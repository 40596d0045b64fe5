/// What fuzzing a policy inside a test found: how many seeds ran, the failing ones, and for the
/// first failure its shrunk scenario.
///
///     let summary = try fuzz(policy: "append-only", seeds: 1...30)
///     summary.passed          // true
///     summary.seedsRun        // 30
public struct FuzzSummary: Sendable {
  /// The spec the workloads were generated with (and, without a custom policy, run under).
  public var policy: PolicySpec
  /// The policy of your own that was fuzzed, if any; ``policy`` is then the spec closest to its
  /// settings, written into the generated scenarios.
  public var customPolicy: (any SyncPolicy)?
  /// The user's app that was fuzzed, if any; ``policy`` is then the spec it is judged as
  /// (`AppUnderTest.judgedAs`).
  public var app: AppUnderTest?
  /// What shaped the random workloads.
  public var shape: WorkloadShape
  /// The seeds asked for.
  public var seeds: ClosedRange<UInt64>
  /// How many seeds ran (fewer than asked when the run stopped at the first failure).
  public var seedsRun: Int
  /// The failing seeds in seed order; the first one carries its shrunk scenario in `shrunk`.
  public var failures: [FuzzOutcome]
  /// Whether the run stopped at the first failure instead of running every seed.
  public var stoppedAtFirstFailure: Bool
  /// The environment variable that chose the seeds instead of the test (`SIM_FUZZ_SEED=17`), if any.
  public var replayedFrom: String?
  /// The Swift Testing test that ran the campaign, when known: failure messages name it in the
  /// command that replays one seed.
  public var testName: String?

  /// No seed failed.
  public var passed: Bool { failures.isEmpty }
  /// The failing seeds, in order.
  public var failingSeeds: [UInt64] { failures.map(\.record.seed) }
  /// The first failure's minimal scenario; its `text` replays the failure.
  public var shrunk: Shrinker.Result? { failures.first?.shrunk }
  /// The policy as reports name it: the custom policy's name, or the spec.
  public var policyName: String { app?.policyName ?? customPolicy?.name ?? policy.description }
  /// The axes the fuzzed policy ran with.
  public var settings: PolicySettings { customPolicy?.settings ?? policy.settings }
}

/// Fuzzes a preset spec over `seeds`, each seed a random workload under its own fault profile,
/// and shrinks the first failure to a minimal scenario. The same arguments give the same summary
/// with any number of `jobs`.
///
///     let summary = fuzz(policy: spec, seeds: 1...20)
///     if let shrunk = summary.shrunk { print(shrunk.text) }
///
/// - Parameters:
///   - policy: a preset and overrides.
///   - seeds: the seeds to run, each its own workload and fault profile.
///   - shape: what the workloads look like (devices, schema, intents per seed).
///   - jobs: parallel workers; the summary is the same for any number.
///   - stopAtFirstFailure: stop after the first failing seed (in seed order), to keep tests fast.
///   - shrinkRuns: the most runs the shrinker may spend on the first failure.
/// - Complexity: one simulated run per seed, plus up to `shrinkRuns` runs for the first failure.
public func fuzz(
  policy: PolicySpec, seeds: ClosedRange<UInt64>, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, shrinkRuns: Int = 3_000
) -> FuzzSummary {
  _fuzz(
    FuzzCampaign(
      shape: shape, spec: policy, custom: nil, seeds: SeedPlan(lower: seeds.lowerBound, upper: seeds.upperBound), jobs: jobs, shrink: false),
    seeds: seeds, stopAtFirstFailure: stopAtFirstFailure, shrinkRuns: shrinkRuns)
}

/// Fuzzes a policy of your own: the same as the preset form, with the generated scenarios naming
/// the spec closest to its settings (`PolicySpec.closest(to:)`) and records carrying its name.
///
///     let summary = fuzz(policy: PreferLongerTitle(), seeds: 1...20)
public func fuzz(
  policy: some SyncPolicy, seeds: ClosedRange<UInt64>, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, shrinkRuns: Int = 3_000
) -> FuzzSummary {
  _fuzz(
    FuzzCampaign(shape: shape, policy: policy, seeds: SeedPlan(lower: seeds.lowerBound, upper: seeds.upperBound), jobs: jobs, shrink: false),
    seeds: seeds, stopAtFirstFailure: stopAtFirstFailure, shrinkRuns: shrinkRuns)
}

/// Like ``fuzz(policy:seeds:shape:jobs:stopAtFirstFailure:shrinkRuns:)-(PolicySpec,_,_,_,_,_)``,
/// with the policy as text: a preset and overrides, e.g. `"field-lww-hlc delete=hard"`.
///
/// - Throws: the spec's parse error, which names the bad word and the valid ones.
public func fuzz(
  policy: String, seeds: ClosedRange<UInt64>, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1,
  stopAtFirstFailure: Bool = true, shrinkRuns: Int = 3_000
) throws(PolicySpec.ParseError) -> FuzzSummary {
  let spec = try PolicySpec.parse(policy).get()
  return fuzz(policy: spec, seeds: seeds, shape: shape, jobs: jobs, stopAtFirstFailure: stopAtFirstFailure, shrinkRuns: shrinkRuns)
}

/// Fuzzes your app over `seeds`: each seed a random workload for apps (values unique per
/// intent; see `WorkloadShape.forApps`) under its own fault profile, with your app and its
/// `SyncEngine` on every device.
///
///     let summary = fuzz(app: NotesApp.self, seeds: 1...20)
public func fuzz<App: SimApp>(
  app: App.Type, seeds: ClosedRange<UInt64>, shape: WorkloadShape = WorkloadShape(), jobs: Int = 1, stopAtFirstFailure: Bool = true,
  shrinkRuns: Int = 3_000
) -> FuzzSummary {
  _fuzz(
    FuzzCampaign(shape: shape, app: AppUnderTest(app), seeds: SeedPlan(lower: seeds.lowerBound, upper: seeds.upperBound), jobs: jobs, shrink: false),
    seeds: seeds, stopAtFirstFailure: stopAtFirstFailure, shrinkRuns: shrinkRuns)
}

func _fuzz(_ campaign: FuzzCampaign, seeds: ClosedRange<UInt64>, stopAtFirstFailure: Bool, shrinkRuns: Int) -> FuzzSummary {
  let collected = _Collected()
  campaign.run { outcome in
    collected.seedsRun += 1
    guard outcome.record.failed else { return true }
    collected.failures.append(outcome)
    return !stopAtFirstFailure
  }
  var failures = collected.failures
  if let first = failures.first {
    // Only the first failure is shrunk: it is the one the message shows.
    let file = WorkloadGenerator.generate(seed: first.record.seed, shape: campaign.shape, policy: campaign.policy).file
    failures[0].shrunk = Shrinker._shrink(
      file, seed: first.record.seed, policy: campaign.policy, custom: campaign.customPolicy, kind: nil, maxRuns: shrinkRuns, app: campaign.app)
  }
  return FuzzSummary(
    policy: campaign.policy, customPolicy: campaign.customPolicy, app: campaign.app, shape: campaign.shape, seeds: seeds,
    seedsRun: collected.seedsRun,
    failures: failures, stoppedAtFirstFailure: stopAtFirstFailure && !failures.isEmpty)
}

/// Outcomes handed over by the campaign, which emits one at a time in seed order.
final class _Collected: @unchecked Sendable {
  var seedsRun = 0
  var failures: [FuzzOutcome] = []
}
