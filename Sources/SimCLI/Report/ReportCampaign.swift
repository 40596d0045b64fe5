import Replica
import Scenarios
@_spi(Kernel) import Simulator

/// One campaign of a report — one policy (or app) on one workload — worked out from its records
/// in seed order, one record per seed: so whatever order the files came in, however the campaign
/// was sharded, the same records give the same value. Signatures are ``FuzzFindings``' own, fed
/// as `fuzz` feeds them: the same groups, numbers and kept kinds as the campaign printed.
struct ReportCampaign: Sendable {
  /// A signature's seeds beyond ``FuzzFindings/Group``.
  struct GroupSeeds: Sendable {
    /// The first few seeds, in order.
    var first: [UInt64] = []
    /// The path of a minimal scenario a record of the signature names: its first seed's, else
    /// the lowest seed's that names one (a shard's first seed of it).
    var minimized: String?
    /// The seed whose record names `minimized`.
    var minimizedSeed: UInt64?
    /// The first seed's trace hash: a shrink made again must start from the same run.
    var firstTraceHash = ""
  }

  /// Seed ranges of equal width across the campaign, for the plots.
  struct Bucket: Sendable {
    var lower: UInt64
    var upper: UInt64
    /// Seeds of the range that were run (and failed).
    var seeds = 0
    var failing = 0
    /// Per kind (``AnomalyKind/allCases`` order): seeds of the range with one.
    var seedsByKind = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    /// Seeds with a wall time, and the sum of their times.
    var timedSeeds = 0
    var wallMicroseconds: UInt64 = 0
  }

  let key: RecordStore.CampaignKey
  /// The preset spec the records name (nil for an app, or a policy of one's own).
  let spec: PolicySpec?
  /// The app the records name (`app NAME`), if any.
  let appName: String?
  /// The campaign's `--intents`, when the user said it (`report --intents N`): records do not.
  var intents: Int?
  private(set) var findings: FuzzFindings
  private(set) var groupSeeds: [GroupSeeds] = []
  private(set) var coverage: SeedCoverage
  private(set) var buckets: [Bucket] = []
  /// Seeds per bin of ``SettleBins``; then seeds never quiet, seeds with no time recorded.
  private(set) var settleBins = [Int](repeating: 0, count: SettleBins.edges.count + 1)
  private(set) var neverQuiet = 0
  private(set) var settleUnknown = 0
  /// Seeds with a wall time, and the sum of them.
  private(set) var timedSeeds = 0
  private(set) var wallMicroseconds: UInt64 = 0

  /// The seeds of this campaign's records (one per seed, in seed order).
  var seeds: Int { findings.seeds }
  var failing: Int { findings.failing }

  /// Works out the campaign `index` of a finished `store`.
  init(store: RecordStore, campaign index: Int) {
    key = store.keys[index]
    let rows = store.rows[index]
    if key.policy.hasPrefix("app ") {
      appName = String(key.policy.dropFirst(4))
      spec = nil
      findings = FuzzFindings(settings: AppUnderTest.judgedAs.settings, app: true)
    } else {
      appName = nil
      spec = try? PolicySpec.parse(key.policy).get()
      findings = FuzzFindings(settings: (spec ?? AppUnderTest.judgedAs).settings)
    }
    coverage = SeedCoverage(rows.lazy.map(\.seed))
    let ranges = coverage.ranges(count: 20)
    buckets = ranges.map { Bucket(lower: $0.lower, upper: $0.upper) }
    var bucket = 0
    for row in rows {
      let record = store.record(row, campaign: index)
      let finding = findings.add(record)
      switch finding {
      case .passed: break
      case .new:
        groupSeeds.append(
          GroupSeeds(
            first: [row.seed], minimized: record.minimized, minimizedSeed: record.minimized.map { _ in row.seed },
            firstTraceHash: record.traceHash))
      case .known(let g):
        if groupSeeds[g].first.count < 5 { groupSeeds[g].first.append(row.seed) }
        if groupSeeds[g].minimized == nil, let path = record.minimized { (groupSeeds[g].minimized, groupSeeds[g].minimizedSeed) = (path, row.seed) }
      }
      while bucket < buckets.count - 1 && row.seed > buckets[bucket].upper { bucket += 1 }
      buckets[bucket].seeds += 1
      if finding != .passed { buckets[bucket].failing += 1 }
      for (k, count) in record.counts.enumerated() where count > 0 && k < AnomalyKind.allCases.count { buckets[bucket].seedsByKind[k] += 1 }
      if row.wall >= 0 {
        buckets[bucket].timedSeeds += 1
        buckets[bucket].wallMicroseconds += UInt64(row.wall)
        timedSeeds += 1
        wallMicroseconds += UInt64(row.wall)
      }
      switch row.settle {
      case -1: neverQuiet += 1
      case -2: settleUnknown += 1
      default: settleBins[SettleBins.bin(of: row.settle)] += 1
      }
    }
  }

  /// Seeds with a violation of each kind, and anomalies of it, in ``AnomalyKind/allCases`` order.
  var kinds: [(kind: AnomalyKind, seeds: Int, anomalies: Int)] {
    AnomalyKind.allCases.enumerated().map { ($1, findings.seedsByKind[$0], findings.totalsByKind[$0]) }
  }

  /// The command that runs one seed of the campaign again: `sim-cli fuzz --seeds N..N
  /// --policy '…'`, with the workload's options the records say, and `--intents` when
  /// ``intents`` is known (records do not say it).
  func againCommand(seed: UInt64) -> String {
    var words = [ToolName.current, "fuzz", "--seeds", "\(seed)..\(seed)"]
    if let appName {
      words += ["--app", CrashReport.shellWord(appName)]
    } else {
      words += ["--policy", "'\(key.policy.replacingOccurrences(of: "'", with: "'\\''"))'"]
    }
    switch key.scenario {
    case "default": break
    case "sharing": words.append("--sharing")
    case "assets": words.append("--assets")
    default: words += ["--scenario", CrashReport.shellWord(key.scenario)]
    }
    if let intents { words += ["--intents", "\(intents)"] }
    return words.joined(separator: " ")
  }
}

/// The bins of the time-to-converge histogram: 1, 2 and 5 times each power of ten from a
/// millisecond to 5,000 s; bin 0 is below the first edge, bin `edges.count` at or above the last.
enum SettleBins {
  static let edges: [Int64] = {
    var edges: [Int64] = []
    var decade: Int64 = 1_000_000
    while decade <= 1_000_000_000_000 {
      edges += [decade, 2 * decade, 5 * decade]
      decade *= 10
    }
    return edges
  }()

  /// The bin of `nanoseconds`.
  static func bin(of nanoseconds: Int64) -> Int { edges.firstIndex { nanoseconds < $0 } ?? edges.count }

  /// `1ms`, `20s`, `5000s`: an edge as the axis writes it.
  static func label(_ edge: Int64) -> String {
    edge >= 1_000_000_000 ? "\(edge / 1_000_000_000)s" : "\(edge / 1_000_000)ms"
  }
}

/// Which seeds a campaign's records hold: their range, the step between them (a shard's files
/// hold every N-th seed), and the seeds of that progression missing from them.
struct SeedCoverage: Sendable, Equatable {
  var count = 0
  var first: UInt64 = 0
  var last: UInt64 = 0
  /// The greatest common step of the seeds (1 for fewer than three seeds).
  var step: UInt64 = 1
  /// Seeds of `first, first + step, … last` not in the records.
  var missing: UInt64 = 0
  /// The first few missing ranges (inclusive, on the progression), and how many there are.
  var missingRanges: [(lower: UInt64, upper: UInt64)] = []
  var missingRangeCount = 0

  static func == (a: SeedCoverage, b: SeedCoverage) -> Bool {
    a.count == b.count && a.first == b.first && a.last == b.last && a.step == b.step && a.missing == b.missing
      && a.missingRanges.elementsEqual(b.missingRanges) { $0 == $1 } && a.missingRangeCount == b.missingRangeCount
  }

  /// The coverage of `seeds`, sorted and distinct.
  init<C: Collection<UInt64>>(_ seeds: C) {
    var previous: UInt64?
    var gcd: UInt64 = 0
    for seed in seeds {
      if let previous {
        gcd = Self.gcd(gcd, seed - previous)
      } else {
        first = seed
      }
      previous = seed
      last = seed
      count += 1
    }
    step = count >= 3 && gcd > 1 ? gcd : 1
    previous = nil
    for seed in seeds {
      if let previous, seed - previous > step {
        let gap = (seed - previous) / step - 1
        missing += gap
        missingRangeCount += 1
        if missingRanges.count < 5 { missingRanges.append((previous + step, seed - step)) }
      }
      previous = seed
    }
  }

  static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 { b == 0 ? a : gcd(b, a % b) }

  /// Up to `count` consecutive ranges of equal width covering `first...last`.
  func ranges(count wanted: Int) -> [(lower: UInt64, upper: UInt64)] {
    guard count > 0 else { return [] }
    let n = UInt64(max(1, min(wanted, count)))
    let width = (last - first) / n + 1
    var ranges: [(UInt64, UInt64)] = []
    var lower = first
    while true {
      let (end, overflow) = lower.addingReportingOverflow(width - 1)
      let upper = overflow ? last : min(end, last)
      ranges.append((lower, upper))
      if upper >= last { break }
      lower = upper + 1
    }
    return ranges
  }
}
