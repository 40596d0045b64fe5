import Replica
import Simulator

/// One fuzz seed's outcome, as written to `--out` (one JSON line per seed).
public struct FuzzRecord: Hashable, Sendable {
  public var seed: UInt64
  public var policy: String
  public var scenario: String
  public var traceHash: String
  public var violations: Int
  /// Counts in `AnomalyKind.allCases` order.
  public var counts: [Int]
  /// Path of the shrunk scenario, if one was written.
  public var minimized: String?

  public var failed: Bool { violations > 0 }

  public var json: JSONValue {
    var c: [String: JSONValue] = [:]
    for (i, k) in AnomalyKind.allCases.enumerated() { c[k.rawValue] = .int(Int64(counts[i])) }
    return [
      "seed": .uint(seed), "policy": .string(policy), "scenario": .string(scenario), "traceHash": .string(traceHash),
      "violations": .int(Int64(violations)), "counts": .object(c), "minimized": minimized.map { .string($0) } ?? .null,
    ]
  }
}

/// Runs fuzz seeds: generate the seed's workload, run it, judge it.
public enum Fuzzer {
  public struct Case: Sendable {
    public var record: FuzzRecord
    public var report: RunReport
    public var file: ScenarioFile
    public var profile: SwarmProfile
  }

  /// Runs one seed. Pure: the same arguments give the same case in any process.
  public static func run(seed: UInt64, shape: WorkloadShape, policy: PolicySpec, customPolicy: (any SyncPolicy)? = nil) -> Case {
    let (file, profile) = WorkloadGenerator.generate(seed: seed, shape: shape, policy: policy)
    let report = ScenarioRunner.run(file, seed: seed, policy: policy, customPolicy: customPolicy).report
    let record = FuzzRecord(
      seed: seed, policy: customPolicy?.name ?? policy.description, scenario: shape.name, traceHash: report.traceHash,
      violations: report.violations.count, counts: report.countsByKind, minimized: nil)
    return Case(record: record, report: report, file: file, profile: profile)
  }
}
