import Scenarios
@_spi(Kernel) import Simulator

/// The records of `sim-cli report`'s inputs, grouped by campaign (policy and workload) and kept
/// small: about 60 bytes a seed, so that a report of millions of seeds fits in memory. What many
/// records share — count vectors, app tallies, paths — is stored once.
///
/// ``finish()`` sorts each campaign by seed and makes one record of each seed: copies (a file
/// given twice, a shard run twice, a resumed file that was also concatenated) are counted once;
/// two records of one seed that disagree on its outcome are errors.
struct RecordStore {
  /// What tells campaigns apart in the records: the policy (or `app NAME`) and the workload.
  struct CampaignKey: Hashable, Comparable, Sendable {
    var policy: String
    var scenario: String

    static func < (a: CampaignKey, b: CampaignKey) -> Bool { (a.policy, a.scenario) < (b.policy, b.scenario) }

    /// `policy cloudkit-default`, or `app NotesApp` (records name an app's campaign so).
    var subject: String { policy.hasPrefix("app ") ? policy : "policy \(policy)" }
  }

  /// One record, compact. Its outcome is `hash`, `hashText`, `counts`, `violations`, `settle`
  /// and `app`; `wall` and `minimized` may differ between copies of the same seed.
  struct Row: Sendable {
    var seed: UInt64
    /// The trace hash when it is 16 hex digits (every hash sim-cli writes), else 0.
    var hash: UInt64
    /// Otherwise, the hash as written (an index of `strings`); -1 when `hash` holds it.
    var hashText: Int32
    /// An index of `countVectors`.
    var counts: Int32
    var violations: Int32
    /// Settle's time to converge in nanoseconds; -1: never quiet; -2: not recorded.
    var settle: Int64
    /// Microseconds on its worker (`fuzz --timings`); -1: not recorded.
    var wall: Int64
    /// An index of `strings`; -1: none.
    var minimized: Int32
    /// An index of `apps`; -1: a policy's record.
    var app: Int32
    /// Where it was read: an index of the inputs, and the line.
    var file: Int32
    var line: Int32

    func sameOutcome(_ other: Row) -> Bool {
      hash == other.hash && hashText == other.hashText && counts == other.counts && violations == other.violations
        && settle == other.settle && app == other.app
    }
  }

  /// The inputs as named on the command line, for diagnostics.
  let files: [String]
  private(set) var keys: [CampaignKey] = []
  private var keyIndex: [CampaignKey: Int] = [:]
  /// Rows by campaign (an index of `keys`).
  private(set) var rows: [[Row]] = []
  private(set) var countVectors: [[Int]] = []
  private var countIndex: [[Int]: Int32] = [:]
  private(set) var strings: [String] = []
  private var stringIndex: [String: Int32] = [:]
  private(set) var apps: [FuzzRecord.AppTally] = []
  private var appIndex: [FuzzRecord.AppTally: Int32] = [:]
  /// Records that repeated another (counted once), after ``finish()``.
  private(set) var duplicates = 0

  init(files: [String]) { self.files = files }

  private mutating func intern(_ s: String) -> Int32 {
    if let i = stringIndex[s] { return i }
    let i = Int32(strings.count)
    strings.append(s)
    stringIndex[s] = i
    return i
  }

  /// Adds a record read at `line` of input `file`.
  mutating func add(_ record: FuzzRecord, file: Int, line: Int) {
    let key = CampaignKey(policy: record.policy, scenario: record.scenario)
    let campaign: Int
    if let index = keyIndex[key] {
      campaign = index
    } else {
      campaign = keys.count
      keys.append(key)
      keyIndex[key] = campaign
      rows.append([])
    }
    var hash: UInt64 = 0
    var hashText: Int32 = -1
    if record.traceHash.utf8.count == 16, record.traceHash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
      let parsed = UInt64(record.traceHash, radix: 16)
    {
      hash = parsed
    } else {
      hashText = intern(record.traceHash)
    }
    let counts: Int32
    if let i = countIndex[record.counts] {
      counts = i
    } else {
      counts = Int32(countVectors.count)
      countVectors.append(record.counts)
      countIndex[record.counts] = counts
    }
    var app: Int32 = -1
    if let tally = record.app {
      if let i = appIndex[tally] {
        app = i
      } else {
        app = Int32(apps.count)
        apps.append(tally)
        appIndex[tally] = app
      }
    }
    let settle = record.convergedAfter.map(\.nanoseconds) ?? (record.neverConverged ? -1 : -2)
    rows[campaign].append(
      Row(
        seed: record.seed, hash: hash, hashText: hashText, counts: counts, violations: Int32(record.violations), settle: settle,
        wall: record.wallMicroseconds.map { Int64($0) } ?? -1, minimized: record.minimized.map { intern($0) } ?? -1, app: app,
        file: Int32(file), line: Int32(line)))
  }

  /// The trace hash of `row` as written.
  func traceHash(_ row: Row) -> String {
    if row.hashText >= 0 { return strings[Int(row.hashText)] }
    let hex = String(row.hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// `row` as the record it was read from (its `minimized` and time as merged).
  func record(_ row: Row, campaign: Int) -> FuzzRecord {
    let key = keys[campaign]
    var record = FuzzRecord(
      seed: row.seed, policy: key.policy, scenario: key.scenario, traceHash: traceHash(row), violations: Int(row.violations),
      counts: countVectors[Int(row.counts)], minimized: row.minimized >= 0 ? strings[Int(row.minimized)] : nil)
    if row.settle >= 0 { record.convergedAfter = SimDuration(nanoseconds: row.settle) }
    record.neverConverged = row.settle == -1
    if row.app >= 0 { record.app = apps[Int(row.app)] }
    if row.wall >= 0 { record.wallMicroseconds = UInt64(row.wall) }
    return record
  }

  /// Where `row` was read: `shard-3.jsonl:17`.
  func place(_ row: Row) -> String { "\(files[Int(row.file)]):\(row.line)" }

  /// Sorts every campaign by seed (then input and line) and keeps one row per seed. Copies with
  /// the same outcome are merged: the first path (in byte order) of a minimal scenario any copy
  /// names, and the shortest wall time — the same whatever order the files came in. Copies that
  /// disagree are returned as errors, the first `limit` of them, with how many there were.
  mutating func finish(limit: Int = 10) -> (errors: [ReportDiagnostic], total: Int) {
    var errors: [ReportDiagnostic] = []
    var total = 0
    duplicates = 0
    for campaign in rows.indices {
      let sorted = rows[campaign].sorted { a, b in
        a.seed != b.seed ? a.seed < b.seed : a.file != b.file ? a.file < b.file : a.line < b.line
      }
      var unique: [Row] = []
      unique.reserveCapacity(sorted.count)
      for row in sorted {
        guard var kept = unique.last, kept.seed == row.seed else {
          unique.append(row)
          continue
        }
        guard kept.sameOutcome(row) else {
          total += 1
          if errors.count < limit { errors.append(conflict(kept, row, campaign: campaign)) }
          continue
        }
        duplicates += 1
        if row.minimized >= 0, kept.minimized < 0 || strings[Int(row.minimized)] < strings[Int(kept.minimized)] {
          kept.minimized = row.minimized
        }
        if row.wall >= 0, kept.wall < 0 || row.wall < kept.wall { kept.wall = row.wall }
        unique[unique.count - 1] = kept
      }
      rows[campaign] = unique
    }
    return (errors, total)
  }

  private func conflict(_ first: Row, _ other: Row, campaign: Int) -> ReportDiagnostic {
    let key = keys[campaign]
    let what: String
    if traceHash(first) != traceHash(other) {
      what = "trace hash \(traceHash(other)) here, \(traceHash(first)) there"
    } else {
      what = "the same trace hash with other counts or times: was one of them edited?"
    }
    return ReportDiagnostic(
      file: files[Int(other.file)], line: Int(other.line), column: 1, severity: .error,
      message: "seed \(other.seed) of \(key.subject) on workload \(key.scenario) has another outcome at \(place(first)) (\(what))")
  }
}
