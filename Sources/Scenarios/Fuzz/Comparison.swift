import Foundation
import Replica
@_spi(Kernel) import Simulator

/// Policies × scenarios → violations: the schema decision with numbers.
public struct Comparison: Sendable {
  /// One policy on one scenario (or on the fuzz workload) over the seeds.
  public struct Cell: Sendable {
    /// The policy, as its spec's canonical spelling.
    public var policy: String
    /// The subject's name (``Subject/name``).
    public var scenario: String
    /// How many seeds were run.
    public var seeds: Int
    /// How many of those seeds reported at least one violation.
    public var failingSeeds: Int
    /// Summed over the seeds, in `AnomalyKind.allCases` order.
    public var counts: [Int]

    /// Failing seeds as a percentage of the seeds run, from 0 to 100 (0 when none ran).
    public var failingPercent: Double { seeds == 0 ? 0 : Double(failingSeeds) * 100 / Double(seeds) }
  }

  /// What to compare: named scenarios (their timelines, with each seed's network draws) and
  /// workload shapes (fuzz seeds).
  public enum Subject: Sendable {
    case scenario(ScenarioFile)
    case workload(WorkloadShape)

    /// How the comparison names the subject: the scenario's name, or `fuzz:` and the workload's
    /// base scenario name (`fuzz:default` for the built-in shape).
    public var name: String {
      switch self {
      case .scenario(let f): f.name
      case .workload(let w): w.base.map { "fuzz:\($0.name)" } ?? "fuzz:default"
      }
    }
  }

  /// The policies to compare.
  public var policies: [PolicySpec]
  /// The scenarios and workloads each policy runs on.
  public var subjects: [Subject]
  /// The seeds every pair runs, bounds included: a scenario's own timeline with each seed's draws,
  /// or one generated workload per seed.
  public var seeds: ClosedRange<UInt64>
  /// Worker threads, at least 1; the cells do not depend on it.
  public var jobs: Int

  /// A comparison of every policy on every subject over `seeds`; `jobs` below 1 counts as 1.
  public init(policies: [PolicySpec], subjects: [Subject], seeds: ClosedRange<UInt64>, jobs: Int = 1) {
    self.policies = policies
    self.subjects = subjects
    self.seeds = seeds
    self.jobs = max(1, jobs)
  }

  /// Runs every pair; cells come back in policy-major order whatever the number of jobs.
  public func run() -> [Cell] {
    let pairs = policies.flatMap { p in subjects.map { (p, $0) } }
    let results = ResultSlots(count: pairs.count)
    let next = Counter()
    let work: @Sendable (Int) -> Void = { _ in
      while let i = next.take(below: pairs.count) {
        results.set(i, cell(policy: pairs[i].0, subject: pairs[i].1))
      }
    }
    if jobs == 1 { work(0) } else { DispatchQueue.concurrentPerform(iterations: jobs, execute: work) }
    return results.values
  }

  func cell(policy: PolicySpec, subject: Subject) -> Cell {
    var counts = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    var failing = 0
    var n = 0
    switch subject {
    case .scenario(let file):
      let plan = ScenarioRunner.prepare(file)
      for seed in seeds {
        let report = ScenarioRunner.run(plan, seed: seed, policy: policy).report
        n += 1
        if !report.violations.isEmpty { failing += 1 }
        for (i, c) in report.countsByKind.enumerated() { counts[i] += c }
      }
    case .workload(let shape):
      for seed in seeds {
        let record = Fuzzer.run(seed: seed, shape: shape, policy: policy).record
        n += 1
        if record.failed { failing += 1 }
        for (i, c) in record.counts.enumerated() { counts[i] += c }
      }
    }
    return Cell(policy: policy.description, scenario: subject.name, seeds: n, failingSeeds: failing, counts: counts)
  }
}

final class ResultSlots: @unchecked Sendable {
  private let lock = NSLock()
  private var slots: [Comparison.Cell?]
  init(count: Int) { slots = Array(repeating: nil, count: count) }
  func set(_ i: Int, _ c: Comparison.Cell) { lock.withLock { slots[i] = c } }
  var values: [Comparison.Cell] { lock.withLock { slots.compactMap { $0 } } }
}

final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var n = 0
  func take(below limit: Int) -> Int? {
    lock.withLock {
      guard n < limit else { return nil }
      defer { n += 1 }
      return n
    }
  }
}
