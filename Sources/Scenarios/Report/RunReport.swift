import Replica
@_spi(Kernel) import Simulator

/// One expectation and whether it held.
public struct ExpectationResult: Hashable, Sendable {
  /// The `expect` line's number in the file; 0 for the implied `expect no violations`.
  public var line: Int
  /// The expectation as written (trimmed, without its comment), or
  /// `expect no violations` (the implied one, on line 0).
  public var text: String
  /// Whether it held after settle.
  public var passed: Bool
  /// What was found instead, when it failed.
  public var actual: String?
}

/// Counters of a run.
public struct RunStats: Hashable, Sendable {
  /// How many events the simulation loop handled, settle included.
  public var events: Int
  /// How many messages were sent, dropped ones included.
  public var messages: Int
  /// The simulated time when the run ended, after settle.
  public var simulatedTime: VirtualTime
  /// How many intents were made, ignored ones included.
  public var intents: Int
  /// How many intents had no effect (the record was not on the device, the text to replace was
  /// not there); they are never judged.
  public var ignoredIntents: Int
  /// How long settle took to bring every device up to date once every fault was healed (the
  /// liveness phase's time to converge); nil when it never did.
  public var convergedAfter: SimDuration? = nil
}

/// With a user's app: how many of the intents it was given it made, and which it refused. A
/// refusal on a record the device did not show is the scenario's doing; any other is the app
/// failing to make a change of its own schema, and fails the run (a run whose changes the app
/// refuses tests nothing).
public struct AppIntentCounts: Hashable, Sendable {
  /// Intents the app made.
  public var applied: Int
  /// Intents refused on a record the device did not show (expected).
  public var refusedAsExpected: Int
  /// Intents refused although the device showed the record (or creates), each in words:
  /// `i7 (iPad set n1 at 3.000s): the app refused it though it shows n1`.
  public var refused: [String]
  /// Intents the simulator does not give an app yet (text replacements): skipped.
  public var notSimulated: Int

  /// `41 applied, 3 refused as expected (the record was not on the device)`, with the
  /// unexpected refusals when there are any.
  public var summary: String {
    var parts = ["\(applied) applied"]
    if refusedAsExpected > 0 { parts.append("\(refusedAsExpected) refused as expected (the record was not on the device)") }
    if !refused.isEmpty { parts.append("\(refused.count) refused unexpectedly") }
    if notSimulated > 0 { parts.append("\(notSimulated) not simulated for an app (text replacements)") }
    return parts.joined(separator: ", ")
  }
}

/// What a run lost: the report `sim-cli run` prints and tests assert on.
public struct RunReport: Hashable, Sendable {
  /// The scenario's name.
  public var scenario: String
  /// The scenario's path or name, as given (for the reproduction command).
  public var source: String
  /// The policy's name: its spec's canonical spelling, or a custom policy's `name`.
  public var policy: String
  /// The Swift type of the policy the run used when it was one of your own (passed as
  /// `policy: PreferLongerTitle()`), e.g. `"PreferLongerTitle"`; nil for a preset spec. Failure
  /// messages use it to write the Swift call that replays the run.
  public var customPolicyType: String?
  /// The user's app the run ran on every device (its name, as `--app` takes it), or nil for a
  /// policy; ``policy`` is then `app NAME`.
  public var app: String?
  /// The axes the policy ran with: the spec's, or a custom policy's `SyncPolicy.settings`.
  public var settings: PolicySettings
  /// The seed the run used: the file's, unless the caller gave another.
  public var seed: UInt64
  /// The run's fingerprint, 16 hex digits: the same scenario, seed, policy and version always give
  /// the same hash (`oracle.md`, *The trace hash*).
  public var traceHash: String
  /// Whether every device and the server showed the same visible state after settle.
  public var converged: Bool
  /// Everything the oracle found, violations and informational kinds, sorted by kind in report
  /// order, then record, field and first intent.
  public var anomalies: [Anomaly]
  /// Every expectation with its outcome, in file order; the implied `expect no violations` when
  /// the file has none.
  public var expectations: [ExpectationResult]
  /// Counters of the run: events, messages, simulated time, intents.
  public var stats: RunStats
  /// Intents that had no effect, with why (`i4 (phone set n1 at 2.200s): the record is not on
  /// this device`). Written when read: a fuzz seed's report is mostly never printed.
  public var ignored: [String] {
    get { _ignored.lines }
    set { _ignored = IgnoredLines(lines: newValue) }
  }
  var _ignored = IgnoredLines()
  /// With an app: why its code could not be run on a device (a delegate call that waited on
  /// something outside the simulator, a delegate nothing kept alive), with the device and time.
  /// The device stopped there; the run fails.
  public var appErrors: [String] = []
  /// With an app: the faults its devices ignored because they are not simulated for an app yet
  /// (background budgets, clock jumps, upgrades), once per device and kind, with when each
  /// first came.
  public var notSimulated: [String] = []
  /// With an app: the intents it made and refused (nil for a policy).
  public var appIntents: AppIntentCounts?
  /// With an app whose schema the scenario was bound to (a lesson on another schema): how its
  /// types and fields were mapped (`Note → Reminder (title → title, tag → priority)`).
  public var boundTo: String?

  /// Count per kind, every kind present, in report order: `report.counts[.lostEdit]`.
  public var counts: AnomalyCounts { AnomalyCounts(byOrdinal: countsByKind) }

  /// Counts in `AnomalyKind.allCases` order.
  public private(set) var countsByKind: [Int] = []

  /// How many anomalies of one kind.
  public func count(_ kind: AnomalyKind) -> Int { countsByKind[kind.ordinal] }

  /// The anomalies of violation kinds, in report order: what fails `expect no violations`.
  public var violations: [Anomaly] { anomalies.filter(\.kind.isViolation) }
  /// Every expectation held.
  public var passed: Bool { expectations.allSatisfy(\.passed) }

  /// Where the scenario came from: a file, the built-in ones, text in code, or code.
  public var origin: ScenarioOrigin

  /// Whether `sim-cli` can run the scenario as the report names it: a file or a built-in one.
  /// Otherwise ``reproduction`` names a file to save it as first (``fileToSave``).
  public var isOnDisk: Bool {
    switch origin {
    case .file, .builtIn: true
    case .text, .code: false
    }
  }

  /// For a scenario parsed from text or built in code, the file name ``reproduction`` runs once
  /// the scenario is saved there (`inline.scenario`); nil for a file or a built-in scenario.
  public var fileToSave: String? {
    guard !isOnDisk else { return nil }
    let base = source.split(separator: "/").last.map(String.init) ?? source
    return base.hasSuffix(".scenario") ? base : (base.isEmpty ? scenario : base) + ".scenario"
  }

  /// The exact command that replays this run (for a scenario that is not a file, once it is
  /// saved as ``fileToSave``). For a policy of your own, which `sim-cli` cannot load, the Swift
  /// call that replays it: `ScenarioRunner.run(try Scenario.load("notes"), seed: 3, policy: PreferLongerTitle())`.
  public var reproduction: String {
    let file = fileToSave ?? source
    if let type = customPolicyType {
      return "ScenarioRunner.run(try Scenario.load(\(swiftStringLiteral(file))), seed: \(seed), policy: \(type.hasSuffix(")") ? type : type + "()"))"
    }
    if let app { return "\(ToolName.current) run \(shellQuote(file)) --seed \(seed) --app \(shellQuote(app))" }
    return "\(ToolName.current) run \(shellQuote(file)) --seed \(seed) --policy \(shellQuote(policy))"
  }

  init(
    file: ScenarioFile, policyName: String, customPolicyType: String?, settings: PolicySettings, seed: UInt64, world: borrowing SyncWorld,
    anomalies: [Anomaly],
    converged: Bool, recordNames: [String]
  ) {
    scenario = file.name
    source = file.source
    policy = policyName
    self.customPolicyType = customPolicyType
    origin = file.origin
    self.settings = settings
    self.seed = seed
    traceHash = world.trace.hash
    self.anomalies = anomalies
    countsByKind = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    for a in anomalies { countsByKind[a.kind.ordinal] += 1 }
    self.converged = converged
    stats = RunStats(
      events: world.eventsProcessed, messages: world.messagesSent, simulatedTime: world.now,
      intents: world.log.intents.count, ignoredIntents: world.log.ignoredCount, convergedAfter: world.facts.convergedAfter)
    if world.log.ignoredCount > 0 {
      var entries: [IgnoredLines.Entry] = []
      entries.reserveCapacity(world.log.ignoredCount)
      for i in world.log.intents {
        guard let why = i.ignored else { continue }
        entries.append(IgnoredLines.Entry(id: i.id, device: i.device, verb: i.kind.verb, record: i.record, time: i.trueTime, why: why))
      }
      _ignored = IgnoredLines(entries: entries, deviceNames: world.config.deviceNames, recordNames: recordNames)
    }
    expectations = []
    let checker = ExpectationChecker(
      world: world, recordNames: recordNames, anomalies: anomalies, countsByKind: countsByKind, converged: converged)
    let expects =
      file.expectations.isEmpty
      ? [Expectation(kind: .noViolations, text: "expect no violations", location: SourceLocation(line: 0, column: 0))]
      : file.expectations
    var results: [ExpectationResult] = []
    results.reserveCapacity(expects.count)
    for e in expects { results.append(checker.check(e)) }
    appErrors = world.drivers.compactMap { $0?.driver.failure }
    notSimulated = world.drivers.flatMap { $0?.driver.notSimulated ?? [] }
    if !appErrors.isEmpty {
      results.append(
        ExpectationResult(line: 0, text: "the app's code runs to the end", passed: false, actual: appErrors.joined(separator: "; ")))
    }
    if !world.drivers.isEmpty {
      let tally = world.drivers.reduce(AppIntentTally()) { $0 + ($1?.driver.tally ?? AppIntentTally()) }
      let counts = AppIntentCounts(
        applied: tally.applied, refusedAsExpected: tally.refusedAsExpected, refused: tally.refused, notSimulated: tally.notSimulated)
      appIntents = counts
      if !tally.refused.isEmpty {
        let shown = tally.refused.prefix(5).joined(separator: "; ") + (tally.refused.count > 5 ? "; … and \(tally.refused.count - 5) more" : "")
        results.append(
          ExpectationResult(
            line: 0, text: "the app makes the changes of its own schema", passed: false,
            actual: "it refused \(tally.refused.count) of \(tally.applied + tally.refusedAsExpected + tally.refused.count): \(shown)"))
      }
    }
    expectations = results
  }
}

/// A shell word: bare when safe, else single-quoted.
package func shellQuote(_ s: String) -> String {
  let safe = s.unicodeScalars.allSatisfy { ($0.properties.isAlphabetic && $0.isASCII) || "0123456789-_./=".unicodeScalars.contains($0) }
  return safe && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// A Swift string literal of `s`.
package func swiftStringLiteral(_ s: String) -> String {
  "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
}

/// A report's ignored intents: what each line says, kept as data until the lines are read (one
/// sentence each, appended to one string), or the lines themselves once set. Two are equal when
/// their lines are.
struct IgnoredLines: Hashable, Sendable {
  struct Entry: Hashable, Sendable {
    var id: IntentID
    var device: Int32
    var verb: String
    var record: RecordKey
    var time: VirtualTime
    var why: String
  }
  var entries: [Entry] = []
  var deviceNames: [String] = []
  var recordNames: [String] = []
  /// Lines set as such (nil: made from ``entries``).
  var set: [String]?

  init(entries: [Entry] = [], deviceNames: [String] = [], recordNames: [String] = []) {
    self.entries = entries
    self.deviceNames = deviceNames
    self.recordNames = recordNames
  }

  init(lines: [String]) { set = lines }

  /// `i4 (phone set n1 at 2.200s): why`, appended to one string.
  var lines: [String] {
    if let set { return set }
    return entries.map { e in
      var s = Vocabulary.intent(e.id)
      s.reserveCapacity(40 + e.why.utf8.count)
      s += " ("
      s += deviceNames[Int(e.device)]
      s += " "
      s += e.verb
      s += " "
      s += recordNames[Int(e.record)]
      s += " at "
      s += e.time.description
      s += "): "
      s += e.why
      return s
    }
  }

  static func == (a: IgnoredLines, b: IgnoredLines) -> Bool { a.lines == b.lines }
  func hash(into hasher: inout Hasher) { hasher.combine(lines) }
}
