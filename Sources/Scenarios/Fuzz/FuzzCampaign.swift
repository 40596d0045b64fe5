import Foundation
import Replica
@_spi(Kernel) import Simulator

/// The seeds a campaign runs: a range, optionally one shard of it (`seed mod N == K-1`), minus
/// the seeds already done (resume).
public struct SeedPlan: Sendable {
  /// The first seed of the range.
  public var lower: UInt64
  /// The last seed of the range, included; `UInt64.max` means no end (``count`` is then nil).
  public var upper: UInt64
  /// `(k, n)`: run only seeds with `seed % n == k - 1`.
  public var shard: (k: UInt64, n: UInt64)?
  /// Seeds to leave out, such as those already in the output file of a resumed campaign.
  public var skip: Set<UInt64>

  /// A plan for `lower...upper`, optionally only shard `k` of `n` (`k` from 1 to `n`), minus `skip`.
  public init(lower: UInt64, upper: UInt64, shard: (k: UInt64, n: UInt64)? = nil, skip: Set<UInt64> = []) {
    self.lower = lower
    self.upper = upper
    self.shard = shard
    self.skip = skip
  }

  /// Whether the plan runs `seed`, range aside: it is in the shard (if any) and not skipped.
  public func includes(_ seed: UInt64) -> Bool {
    if let (k, n) = shard, seed % n != k - 1 { return false }
    return !skip.contains(seed)
  }

  /// The plan's first seed, skipped seeds aside (nil: the range holds none of its shard).
  public var first: UInt64? {
    guard lower <= upper else { return nil }
    guard let (k, n) = shard else { return lower }
    let (seed, overflow) = lower.addingReportingOverflow((k - 1 + n - lower % n) % n)
    return overflow || seed > upper ? nil : seed
  }

  /// The plan's next seed after `seed` (one of its shard), skipped seeds aside; nil after the last.
  public func seed(after seed: UInt64) -> UInt64? {
    let (next, overflow) = seed.addingReportingOverflow(shard?.n ?? 1)
    return overflow || next > upper ? nil : next
  }

  /// How many seeds the plan runs, when the range is finite enough to count.
  public var count: UInt64? {
    guard upper != .max else { return nil }
    let span = upper - lower + 1
    var n = span
    if let (k, m) = shard {
      // Seeds in [lower, upper] congruent to k-1 mod m.
      let first = lower + ((k - 1 + m - lower % m) % m)
      n = first > upper ? 0 : (upper - first) / m + 1
    }
    var skipped: UInt64 = 0
    for seed in skip where seed >= lower && seed <= upper {
      if let (k, m) = shard, seed % m != k - 1 { continue }
      skipped += 1
    }
    return n - min(n, skipped)
  }
}

/// One seed's full outcome.
public struct FuzzOutcome: Sendable {
  /// The seed's record for `--out`; its ``FuzzRecord/minimized`` is nil until the caller writes
  /// the shrunk file.
  public var record: FuzzRecord
  /// The faults the seed ran under.
  public var profile: SwarmProfile
  /// The anomalies of a failing seed (empty when it passed).
  public var violations: [Anomaly]
  /// The shrunk scenario of a failing seed, when shrinking is on.
  public var shrunk: Shrinker.Result?
  /// With an app: the intents of its own schema it refused, and why its code could not run to
  /// the end, in words (empty when it did what it was asked).
  public var appProblems: [String] = []
  /// The wall-clock time the seed took on its worker thread (generate, run, judge, and shrink
  /// when the campaign shrinks); zero for an outcome made by ``FuzzCampaign/outcome(of:)``
  /// alone. Wall-clock data: it differs between runs, and nothing else depends on it.
  public var wallTime: Duration = .zero
}

/// Runs many seeds on several threads and hands the outcomes over in seed order, so that a
/// campaign's output is the same with one job or many.
public struct FuzzCampaign: Sendable {
  /// What every seed's workload is shaped by.
  public var shape: WorkloadShape
  /// The policy the generated scenarios name, and the one every seed runs under unless
  /// ``customPolicy`` is set.
  public var policy: PolicySpec
  /// The policy of your own every seed runs under, when the campaign was made with one; records
  /// then carry its `name`, and ``policy`` is the spec closest to its settings.
  public private(set) var customPolicy: (any SyncPolicy)?
  /// The user's app every seed runs on every device, when the campaign was made with one; records
  /// then name the policy `app NAME`, and ``policy`` is ``AppUnderTest/judgedAs``.
  public private(set) var app: AppUnderTest?
  /// The seeds to run.
  public var seeds: SeedPlan
  /// Worker threads, at least 1; outcomes come out in seed order whatever the number.
  public var jobs: Int
  /// Shrink every failing seed.
  public var shrink: Bool

  /// A campaign over `seeds` under a preset spec; `jobs` below 1 counts as 1, and failing seeds
  /// are shrunk unless `shrink` is false.
  public init(shape: WorkloadShape, policy: PolicySpec, seeds: SeedPlan, jobs: Int = 1, shrink: Bool = true) {
    self.init(shape: shape, spec: policy, custom: nil, seeds: seeds, jobs: jobs, shrink: shrink)
  }

  /// A campaign over `seeds` under a policy of your own.
  public init(shape: WorkloadShape, policy: some SyncPolicy, seeds: SeedPlan, jobs: Int = 1, shrink: Bool = true) {
    self.init(shape: shape, spec: PolicySpec.closest(to: policy.settings), custom: policy, seeds: seeds, jobs: jobs, shrink: shrink)
  }

  /// A campaign over `seeds` with a user's app on every device, on the workload for apps
  /// (``WorkloadShape/forApps``, set here).
  public init(shape: WorkloadShape, app: AppUnderTest, seeds: SeedPlan, jobs: Int = 1, shrink: Bool = true) {
    self.init(shape: shape.forApp(app), spec: AppUnderTest.judgedAs, custom: nil, seeds: seeds, jobs: jobs, shrink: shrink)
    self.app = app
  }

  package init(shape: WorkloadShape, spec: PolicySpec, custom: (any SyncPolicy)?, seeds: SeedPlan, jobs: Int, shrink: Bool) {
    self.shape = shape
    self.policy = spec
    self.customPolicy = custom
    self.seeds = seeds
    self.jobs = max(1, jobs)
    self.shrink = shrink
  }

  /// Runs one seed (what each worker does).
  public func outcome(of seed: UInt64) -> FuzzOutcome {
    let c = Fuzzer._run(seed: seed, shape: shape, spec: policy, custom: customPolicy, app: app)
    var shrunk: Shrinker.Result?
    if shrink, c.record.failed {
      shrunk = Shrinker._shrink(c.file, seed: seed, policy: policy, custom: customPolicy, kind: nil, maxRuns: 3_000, app: app)
    }
    var outcome = FuzzOutcome(record: c.record, profile: c.profile, violations: c.report.violations, shrunk: shrunk)
    outcome.appProblems = (c.report.appIntents?.refused ?? []) + c.report.appErrors
    return outcome
  }

  /// Runs the plan. `emit` is called once per seed, in seed order, one call at a time; it
  /// returns false to stop the campaign (nothing after that seed is emitted). `shouldStop` is
  /// polled between seeds (a time limit).
  public func run(shouldStop: @escaping @Sendable () -> Bool = { false }, emit: @escaping @Sendable (FuzzOutcome) -> Bool) {
    let state = CampaignState(plan: seeds)
    // Workers on other threads name the tool as this one does (a task-local value is not
    // inherited by a thread): their reports' `reproduce:` lines are the same for any `--jobs`.
    let tool = ToolName.current
    let work: @Sendable (Int) -> Void = { _ in
      ToolName.$current.withValue(tool) {
        let clock = ContinuousClock()
        while let (index, seed) = state.take(stop: shouldStop()) {
          let start = clock.now
          var result = self.outcome(of: seed)
          result.wallTime = clock.now - start
          state.complete(index: index, result, emit: emit)
        }
      }
    }
    if jobs == 1 {
      work(0)
    } else {
      DispatchQueue.concurrentPerform(iterations: jobs, execute: work)
    }
  }
}

/// Shared between workers: the next seed to hand out, and results waiting for their turn.
final class CampaignState: @unchecked Sendable {
  private let lock = NSLock()
  private let plan: SeedPlan
  private var nextSeed: UInt64
  private var exhausted = false
  private var stopped = false
  private var nextIndex = 0
  private var nextToEmit = 0
  private var waiting: [Int: FuzzOutcome] = [:]

  init(plan: SeedPlan) {
    self.plan = plan
    nextSeed = plan.lower
    exhausted = plan.lower > plan.upper
  }

  /// The next seed to run, with its position in seed order; nil when done or stopped.
  func take(stop: Bool) -> (Int, UInt64)? {
    lock.lock()
    defer { lock.unlock() }
    if stop { stopped = true }
    while !exhausted && !stopped {
      let seed = nextSeed
      if seed == plan.upper { exhausted = true } else { nextSeed += 1 }
      if plan.includes(seed) {
        defer { nextIndex += 1 }
        return (nextIndex, seed)
      }
    }
    return nil
  }

  func complete(index: Int, _ outcome: FuzzOutcome, emit: (FuzzOutcome) -> Bool) {
    lock.lock()
    defer { lock.unlock() }
    waiting[index] = outcome
    while !stopped, let ready = waiting.removeValue(forKey: nextToEmit) {
      nextToEmit += 1
      if !emit(ready) { stopped = true }
    }
    if stopped { waiting.removeAll() }
  }
}
