import Foundation
import ReferenceOracle
import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// Runs the oracle and the independent reference checker on the same runs and compares what
/// they found, anomaly kind by record and field (`sim-cli selftest --oracles`, and the test
/// that runs a slice of it).
package enum OracleAgreement {
  /// A verdict both oracles can state: kind, record key, field index.
  package typealias Verdict = ReferenceVerdict

  /// One run on which the two oracles disagree.
  package struct Difference: Sendable, CustomStringConvertible {
    package var seed: UInt64
    package var policy: String
    /// What only the oracle found, and what only the reference found.
    package var onlyOracle: [String]
    package var onlyReference: [String]
    package var reproduction: String

    package var description: String {
      "seed \(seed), policy \(policy): only the oracle found [\(onlyOracle.joined(separator: ", "))]; only the reference found [\(onlyReference.joined(separator: ", "))] — \(reproduction)"
    }
  }

  /// The oracle's anomalies as verdicts: names mapped back to record keys and field indices.
  static func verdicts(_ result: ScenarioRunner.Result) -> [Verdict] {
    result.report.anomalies.map { Verdict(kind: $0.kind.rawValue, record: $0.record?.key, field: $0.field?.index) }.sorted()
  }

  /// Runs fuzz seed `seed` of the default workload under `policy` and compares the oracles.
  package static func compare(seed: UInt64, policy: PolicySpec, shape: WorkloadShape = WorkloadShape()) -> Difference? {
    let (file, _) = WorkloadGenerator.generate(seed: seed, shape: shape, policy: policy)
    let result = ScenarioRunner.run(file, seed: seed, policy: policy, recordObservations: true)
    let mine = verdicts(result)
    let theirs = ReferenceOracle.judge(result.world)
    guard mine != theirs else { return nil }
    return difference(
      mine, theirs, result, file, seed: seed, subject: policy.description,
      reproduction: shape.forApps
        ? "\(ToolName.current) selftest --oracles --workload app --seeds \(seed)..\(seed)"
        : "\(ToolName.current) fuzz --seeds \(seed)..\(seed) --policy '\(policy)'\(shape.sharing ? " --sharing" : "")")
  }

  /// Runs fuzz seed `seed` of the workload for `app` with the app on every device and compares
  /// the oracles.
  package static func compare(seed: UInt64, app: AppUnderTest, shape: WorkloadShape = WorkloadShape()) -> Difference? {
    let shape = shape.forApp(app)
    let policy = AppUnderTest.judgedAs
    let (file, _) = WorkloadGenerator.generate(seed: seed, shape: shape, policy: policy)
    let result = ScenarioRunner._run(ScenarioRunner.prepare(file), seed: seed, spec: policy, custom: nil, recordObservations: true, app: app)
    let mine = verdicts(result)
    let theirs = ReferenceOracle.judge(result.world)
    guard mine != theirs else { return nil }
    return difference(
      mine, theirs, result, file, seed: seed, subject: app.policyName,
      reproduction: "\(ToolName.current) selftest --oracles --app \(app.name) --seeds \(seed)..\(seed)")
  }

  /// The verdicts only one oracle reached, in words.
  static func difference(
    _ mine: [Verdict], _ theirs: [Verdict], _ result: ScenarioRunner.Result, _ file: ScenarioFile, seed: UInt64, subject: String,
    reproduction: String
  ) -> Difference {
    func describe(_ v: Verdict) -> String {
      let record = v.record.map { Int($0) < result.recordNames.count ? result.recordNames[Int($0)] : "r\($0)" }
      let field = v.field.flatMap { f in
        v.record.flatMap { k in result.world.serverRecord(k).map { file.schema.types[Int($0.type)].fields[f].name } } ?? "f\(f)"
      }
      return v.kind + (record.map { " " + $0 } ?? "") + (field.map { "." + $0 } ?? "")
    }
    return Difference(
      seed: seed, policy: subject, onlyOracle: multisetDifference(mine, theirs).map(describe),
      onlyReference: multisetDifference(theirs, mine).map(describe), reproduction: reproduction)
  }

  /// `a` minus `b`, counting repeats (both sorted).
  static func multisetDifference(_ a: [Verdict], _ b: [Verdict]) -> [Verdict] {
    var rest = b
    var out: [Verdict] = []
    for v in a {
      if let i = rest.firstIndex(of: v) { rest.remove(at: i) } else { out.append(v) }
    }
    return out
  }

  /// Every built-in preset (the safe designs and the planted bugs).
  package static var presets: [PolicySpec] {
    PolicyPreset.all.compactMap { try? PolicySpec.parse($0.name).get() }
  }
}
