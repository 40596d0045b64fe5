import Foundation
import Replica
@_spi(Kernel) import Simulator

/// One fuzz seed's outcome, as written to `--out` (one JSON line per seed) and read back by
/// `--resume`: one `Codable` type both ways, keys sorted, every count present.
///
///     {"counts":{"concurrent-overwrite":0,…},"minimized":null,"policy":"append-only","scenario":"default","seed":1,"traceHash":"…","violations":0}
public struct FuzzRecord: Hashable, Sendable, Codable {
  /// The fuzz seed: it draws the workload, the faults and the run's network.
  public var seed: UInt64
  /// The policy's name: its spec's canonical spelling, or a custom policy's `name`.
  public var policy: String
  /// The workload shape's name: its base scenario's name, or `default`.
  public var scenario: String
  /// The run's trace hash, 16 hex digits; the same seed, shape, policy and version give the same.
  public var traceHash: String
  /// How many anomalies of violation kinds the run reported.
  public var violations: Int
  /// Counts in `AnomalyKind.allCases` order.
  public var counts: [Int]
  /// Path of the shrunk scenario, if one was written.
  public var minimized: String?
  /// How long settle took to converge once every fault was healed (nil: it did not). Written
  /// as a duration (`"5.2s"`, or `null`); absent in records of versions before it existed.
  public var convergedAfter: SimDuration?
  /// Whether settle never converged (`"convergedAfter": "never"`); false for records of
  /// versions before the key existed.
  public var neverConverged = false
  /// With a user's app: what it made of the seed's intents, and whether its code ran to the end
  /// (`"app": {"applied": 41, "refusedAsExpected": 3, "refused": 0, "errors": 0}`); nil for a
  /// policy (the key is then absent).
  public var app: AppTally?
  /// Wall-clock microseconds the seed took on its worker (generate, run, judge), written only by
  /// `fuzz --timings` (`"wallMicroseconds": 1834`); nil otherwise, and in records of versions
  /// before it existed (the key is then absent). The one field that differs between two runs of
  /// the same seed: `sim-cli report` plots it, and ignores it when it compares records.
  public var wallMicroseconds: UInt64?

  /// A user's app's intents and errors in one seed.
  public struct AppTally: Hashable, Sendable, Codable {
    /// Intents the app made.
    public var applied: Int
    /// Intents refused on a record the device did not show (expected).
    public var refusedAsExpected: Int
    /// Intents the app refused although it showed the record (or creates): each fails the seed.
    public var refused: Int
    /// Devices whose app code could not run to the end (each fails the seed).
    public var errors: Int
    /// A tally.
    public init(applied: Int, refusedAsExpected: Int, refused: Int, errors: Int) {
      self.applied = applied
      self.refusedAsExpected = refusedAsExpected
      self.refused = refused
      self.errors = errors
    }
  }

  /// Whether the seed failed: a violation, or with an app an intent of its own schema it
  /// refused or code of its that could not run to the end.
  public var failed: Bool { violations > 0 || (app.map { $0.refused > 0 || $0.errors > 0 } ?? false) }

  /// A record; `counts` are in `AnomalyKind.allCases` order, `minimized` nil when nothing was
  /// shrunk.
  public init(seed: UInt64, policy: String, scenario: String, traceHash: String, violations: Int, counts: [Int], minimized: String?) {
    self.seed = seed
    self.policy = policy
    self.scenario = scenario
    self.traceHash = traceHash
    self.violations = violations
    self.counts = counts
    self.minimized = minimized
  }

  enum CodingKeys: String, CodingKey {
    case seed, policy, scenario, traceHash, violations, counts, minimized, convergedAfter, app, wallMicroseconds
  }

  public func encode(to encoder: any Encoder) throws {
    var c = encoder.container(keyedBy: CodingKeys.self)
    try c.encode(seed, forKey: .seed)
    try c.encode(policy, forKey: .policy)
    try c.encode(scenario, forKey: .scenario)
    try c.encode(traceHash, forKey: .traceHash)
    try c.encode(violations, forKey: .violations)
    var byName: [String: Int] = [:]
    for (i, k) in AnomalyKind.allCases.enumerated() { byName[k.rawValue] = i < counts.count ? counts[i] : 0 }
    try c.encode(byName, forKey: .counts)
    if let minimized { try c.encode(minimized, forKey: .minimized) } else { try c.encodeNil(forKey: .minimized) }
    if let convergedAfter {
      try c.encode(convergedAfter.description, forKey: .convergedAfter)
    } else if neverConverged {
      try c.encode("never", forKey: .convergedAfter)
    } else {
      try c.encodeNil(forKey: .convergedAfter)
    }
    try c.encodeIfPresent(app, forKey: .app)
    try c.encodeIfPresent(wallMicroseconds, forKey: .wallMicroseconds)
  }

  public init(from decoder: any Decoder) throws {
    let c = try decoder.container(keyedBy: CodingKeys.self)
    seed = try c.decode(UInt64.self, forKey: .seed)
    policy = try c.decode(String.self, forKey: .policy)
    scenario = try c.decode(String.self, forKey: .scenario)
    traceHash = try c.decode(String.self, forKey: .traceHash)
    violations = try c.decode(Int.self, forKey: .violations)
    let byName = try c.decode([String: Int].self, forKey: .counts)
    counts = AnomalyKind.allCases.map { byName[$0.rawValue] ?? 0 }
    minimized = try c.decodeIfPresent(String.self, forKey: .minimized)
    app = try c.decodeIfPresent(AppTally.self, forKey: .app)
    wallMicroseconds = try c.decodeIfPresent(UInt64.self, forKey: .wallMicroseconds)
    if let text = try c.decodeIfPresent(String.self, forKey: .convergedAfter) {
      if text == "never" {
        neverConverged = true
        return
      }
      guard case .success(let d) = SimDuration.parse(text) else {
        throw DecodingError.dataCorruptedError(forKey: .convergedAfter, in: c, debugDescription: "not a duration: \(text)")
      }
      convergedAfter = d
    }
  }

  /// The record as one JSON line (without the newline), keys sorted (``encode(to:)`` says what
  /// is written), written directly rather than through `JSONEncoder`, which took 7% of a `fuzz
  /// --out` seed. Strings are written as all the JSON the tool prints is (`JSONValue`): for
  /// printable text these are `JSONEncoder`'s bytes; a control or invisible character is escaped.
  public var jsonLine: String {
    var out = ""
    out.reserveCapacity(640)
    // Objects and their keys, a comma before every key but an object's first.
    var first = true
    func open() {
      out += "{"
      first = true
    }
    func close() {
      out += "}"
      first = false
    }
    func key(_ k: String) {
      if !first { out += "," }
      first = false
      JSONValue.writeString(k, to: &out)
      out += ":"
    }
    func string(_ s: String) { JSONValue.writeString(s, to: &out) }
    open()
    if let app {
      key("app")
      open()
      key("applied")
      out += String(app.applied)
      key("errors")
      out += String(app.errors)
      key("refused")
      out += String(app.refused)
      key("refusedAsExpected")
      out += String(app.refusedAsExpected)
      close()
    }
    key("convergedAfter")
    if let convergedAfter { string(convergedAfter.description) } else if neverConverged { string("never") } else { out += "null" }
    key("counts")
    open()
    for k in Self.countsOrder {
      key(AnomalyKind.allCases[k].rawValue)
      out += String(k < counts.count ? counts[k] : 0)
    }
    close()
    key("minimized")
    if let minimized { string(minimized) } else { out += "null" }
    key("policy")
    string(policy)
    key("scenario")
    string(scenario)
    key("seed")
    out += String(seed)
    key("traceHash")
    string(traceHash)
    key("violations")
    out += String(violations)
    if let wallMicroseconds {
      key("wallMicroseconds")
      out += String(wallMicroseconds)
    }
    close()
    return out
  }

  /// The kinds in the order of their names, as sorted keys write them.
  static let countsOrder = AnomalyKind.allCases.indices.sorted { AnomalyKind.allCases[$0].rawValue < AnomalyKind.allCases[$1].rawValue }

  /// A record read from one JSON line.
  public static func decode(jsonLine: some DataProtocol) throws -> FuzzRecord {
    try JSONDecoder().decode(FuzzRecord.self, from: Data(jsonLine))
  }
}

/// Runs fuzz seeds: generate the seed's workload, run it, judge it.
public enum Fuzzer {
  /// Everything one seed produced: its record, the full report, the generated scenario and the
  /// faults it ran under.
  public struct Case: Sendable {
    /// The seed's record, as `--out` writes it (``FuzzRecord/minimized`` is nil).
    public var record: FuzzRecord
    /// The run's full report.
    public var report: RunReport
    /// The generated scenario, without expectations; `sim-cli run` replays it.
    public var file: ScenarioFile {
      get {
        guard let seed = _aboutFromSeed else { return _file }
        var f = _file
        f.about = WorkloadGenerator.about(seed: seed, profile)
        return f
      }
      set {
        _file = newValue
        _aboutFromSeed = nil
      }
    }
    /// The faults the seed ran under.
    public var profile: SwarmProfile
    /// The file as run, without its `about` line (the profile in words), which ``file`` writes
    /// when it is read, from this seed — until a file is set.
    var _file: ScenarioFile
    var _aboutFromSeed: UInt64?

    init(record: FuzzRecord, report: RunReport, file: ScenarioFile, profile: SwarmProfile) {
      self.record = record
      self.report = report
      self._file = file
      self.profile = profile
      _aboutFromSeed = file.about == nil ? record.seed : nil
    }
  }

  /// Runs one seed under a preset spec. Pure: the same arguments give the same case in any
  /// process.
  public static func run(seed: UInt64, shape: WorkloadShape, policy: PolicySpec) -> Case {
    _run(seed: seed, shape: shape, spec: policy, custom: nil)
  }

  /// Runs one seed under a policy of your own; the generated scenario's `policy` line is the
  /// spec closest to its settings (`PolicySpec.closest(to:)`), and the record carries its name.
  public static func run(seed: UInt64, shape: WorkloadShape, policy: some SyncPolicy) -> Case {
    _run(seed: seed, shape: shape, spec: PolicySpec.closest(to: policy.settings), custom: policy)
  }

  /// Runs one seed with a user's app on every device: the workload is the one for apps
  /// (``WorkloadShape/forApps``, set here), judged as ``AppUnderTest/judgedAs``.
  public static func run(seed: UInt64, shape: WorkloadShape, app: AppUnderTest) -> Case {
    _run(seed: seed, shape: shape, spec: AppUnderTest.judgedAs, custom: nil, app: app)
  }

  package static func _run(seed: UInt64, shape: WorkloadShape, spec policy: PolicySpec, custom: (any SyncPolicy)?, app: AppUnderTest? = nil) -> Case {
    var shape = shape
    if let app { shape = shape.forApp(app) }
    var (file, profile) = WorkloadGenerator._generate(seed: seed, shape: shape, policy: policy)
    // (A run with an app is judged as the app; the generated file names no preset.)
    if app != nil { file.policyLocation = nil }
    let report = ScenarioRunner._run(ScenarioRunner.prepare(file), seed: seed, spec: policy, custom: custom, app: app).report
    var record = FuzzRecord(
      seed: seed, policy: app?.policyName ?? custom?.name ?? policy.description, scenario: shape.name, traceHash: report.traceHash,
      violations: report.violations.count, counts: report.countsByKind, minimized: nil)
    record.convergedAfter = report.stats.convergedAfter
    record.neverConverged = report.stats.convergedAfter == nil
    if let counts = report.appIntents {
      record.app = FuzzRecord.AppTally(
        applied: counts.applied, refusedAsExpected: counts.refusedAsExpected, refused: counts.refused.count, errors: report.appErrors.count)
    }
    return Case(record: record, report: report, file: file, profile: profile)
  }
}
