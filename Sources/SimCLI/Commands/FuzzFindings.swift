import Replica
import Scenarios
import Simulator

/// A campaign's results as the final summary shows them: failing seeds grouped by
/// ``FuzzSignature`` in the order their first seeds came, and anomaly counts by kind.
///
/// Records must be added in seed order (the campaign emits them so); everything here then
/// depends on the records alone, never on timing or `--jobs`. A resumed campaign adds the
/// records already in its `--out` file first, so its groups are those of an uninterrupted one.
struct FuzzFindings: Sendable {
  /// The failing seeds of one signature.
  struct Group: Sendable {
    /// What the seeds have in common.
    var signature: FuzzSignature
    /// The first seed (the one shrunk).
    var firstSeed: UInt64
    /// How many seeds have this signature.
    var seeds = 1
    /// The kind the first seed's shrink keeps (nil: not shrunk — the app refused intents).
    var kept: AnomalyKind?
    /// Where the first seed's minimal scenario was written, if it was.
    var minimized: String?
    /// Found by the earlier run of a resumed campaign (already printed there).
    var earlier: Bool
  }

  /// What a record adds.
  enum Finding: Equatable {
    /// No violation.
    case passed
    /// A signature seen before, at `groups[index]`.
    case known(index: Int)
    /// A new signature, whose first seed is to be shrunk keeping `keep` (nil: not shrunk).
    case new(FuzzSignature, keep: AnomalyKind?)
  }

  /// The settings of the policy under test (they decide the signatures' axes).
  let settings: PolicySettings
  /// Groups in the order of their first seeds.
  private(set) var groups: [Group] = []
  /// `groups` by signature key, for lookup only (never iterated: its order is per process).
  private var groupIndex: [[String]: Int] = [:]
  /// The kinds kept by the groups' minimal scenarios so far, in the order they were chosen.
  private(set) var covered: [AnomalyKind] = []
  /// The kinds of the groups this run found, in the order they first came — not those of
  /// groups an earlier run of a resumed campaign found, whose blocks this run's output does not
  /// have (a new signature whose kinds are all here is printed briefly, as "shown above").
  private(set) var kindsSeen: [AnomalyKind] = []
  /// Seeds added.
  private(set) var seeds = 0
  /// Failing seeds added.
  private(set) var failing = 0
  /// Per kind (``AnomalyKind/allCases`` order): seeds with at least one anomaly of the kind.
  private(set) var seedsByKind = [Int](repeating: 0, count: AnomalyKind.allCases.count)
  /// Per kind (``AnomalyKind/allCases`` order): anomalies of the kind over all seeds.
  private(set) var totalsByKind = [Int](repeating: 0, count: AnomalyKind.allCases.count)

  /// Settle's time to converge of every seed that converged, in nanoseconds (for percentiles).
  private(set) var convergence: [Int64] = []
  /// Seeds whose settle never converged.
  private(set) var unconverged = 0

  /// Whether the seeds ran a user's app (signatures then name no policy axis).
  var app = false
  /// With an app: its intents over all seeds — made, refused as expected, refused.
  private(set) var appIntents = (applied: 0, refusedAsExpected: 0, refused: 0)

  init(settings: PolicySettings, app: Bool = false) {
    self.settings = settings
    self.app = app
  }

  /// `p50 5.000s · p90 35.100s · p99 62.000s · max 180.000s; 2 seeds never quiet` — nil before
  /// any seed with a known time (records of older versions have none).
  var convergenceText: String? {
    guard !convergence.isEmpty || unconverged > 0 else { return nil }
    let sorted = convergence.sorted()
    var parts: [String] = []
    if !sorted.isEmpty {
      func at(_ q: Int) -> String { Self.time(sorted[min(sorted.count - 1, (sorted.count * q + 99) / 100 - 1)]) }
      parts.append("p50 \(at(50)) · p90 \(at(90)) · p99 \(at(99)) · max \(Self.time(sorted[sorted.count - 1]))")
    }
    if unconverged > 0 { parts.append("\(unconverged) seed\(unconverged == 1 ? "" : "s") never quiet") }
    return parts.joined(separator: "; ")
  }

  /// `12.076s`: to the millisecond, as reports print times.
  static func time(_ nanoseconds: Int64) -> String { VirtualTime(nanoseconds: nanoseconds).description }

  /// Percentiles of the time to converge, for `--format json` (nil before any converged seed).
  var convergencePercentiles: [String: String]? {
    let sorted = convergence.sorted()
    guard !sorted.isEmpty else { return nil }
    func at(_ q: Int) -> String { Self.time(sorted[min(sorted.count - 1, (sorted.count * q + 99) / 100 - 1)]) }
    return ["p50": at(50), "p90": at(90), "p99": at(99), "max": Self.time(sorted[sorted.count - 1])]
  }

  /// What `record` would add, without adding it.
  func finding(for record: FuzzRecord) -> Finding {
    guard let signature = FuzzSignature(record: record, settings: settings, app: app) else { return .passed }
    if let index = groupIndex[signature.key] { return .known(index: index) }
    return .new(signature, keep: signature.kindToKeep(covered: covered))
  }

  /// Adds the next record in seed order; `minimized` is where its minimal scenario was written
  /// when it is the first of its signature. Returns what it added.
  @discardableResult
  mutating func add(_ record: FuzzRecord, minimized: String? = nil, earlier: Bool = false)
    -> Finding
  {
    let finding = finding(for: record)
    seeds += 1
    if let tally = record.app {
      appIntents.applied += tally.applied
      appIntents.refusedAsExpected += tally.refusedAsExpected
      appIntents.refused += tally.refused
    }
    if let d = record.convergedAfter { convergence.append(d.nanoseconds) } else if record.neverConverged { unconverged += 1 }
    for (index, count) in record.counts.enumerated() where index < totalsByKind.count && count > 0 {
      seedsByKind[index] += 1
      totalsByKind[index] += count
    }
    switch finding {
    case .passed:
      break
    case .known(let index):
      failing += 1
      groups[index].seeds += 1
    case .new(let signature, let keep):
      failing += 1
      groupIndex[signature.key] = groups.count
      if let keep, !covered.contains(keep) { covered.append(keep) }
      if !earlier { for kind in signature.kinds where !kindsSeen.contains(kind) { kindsSeen.append(kind) } }
      groups.append(
        Group(
          signature: signature, firstSeed: record.seed, kept: keep, minimized: minimized, earlier: earlier))
    }
    return finding
  }
}
