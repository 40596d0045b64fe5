import Replica
@_spi(Kernel) import Simulator

/// One expectation and whether it held.
public struct ExpectationResult: Hashable, Sendable {
  public var line: Int
  public var text: String
  public var passed: Bool
  /// What was found instead, when it failed.
  public var actual: String?
}

/// Counters of a run.
public struct RunStats: Hashable, Sendable {
  public var events: Int
  public var messages: Int
  public var simulatedTime: VirtualTime
  public var intents: Int
  public var ignoredIntents: Int
}

/// What a run lost: the report `sim-cli run` prints and tests assert on.
public struct RunReport: Hashable, Sendable {
  public var scenario: String
  /// The scenario's path or name, as given (for the reproduction command).
  public var source: String
  public var policy: String
  public var seed: UInt64
  public var traceHash: String
  public var converged: Bool
  public var anomalies: [Anomaly]
  public var expectations: [ExpectationResult]
  public var stats: RunStats
  /// Intents that had no effect, with why (`i4 (phone): the record is not on this device`).
  public var ignored: [String]

  /// Count per kind, every kind present.
  public var counts: [AnomalyKind: Int] {
    var c: [AnomalyKind: Int] = [:]
    for (i, k) in AnomalyKind.allCases.enumerated() { c[k] = countsByKind[i] }
    return c
  }

  /// Counts in `AnomalyKind.allCases` order.
  public private(set) var countsByKind: [Int] = []

  /// How many anomalies of one kind.
  public func count(_ kind: AnomalyKind) -> Int { countsByKind[kind.ordinal] }

  public var violations: [Anomaly] { anomalies.filter(\.kind.isViolation) }
  /// Every expectation held.
  public var passed: Bool { expectations.allSatisfy(\.passed) }

  /// The exact command that replays this run.
  public var reproduction: String {
    "sim-cli run \(shellQuote(source)) --seed \(seed) --policy \(shellQuote(policy))"
  }

  init(file: ScenarioFile, policyName: String, seed: UInt64, world: SyncWorld, anomalies: [Anomaly], converged: Bool, recordNames: [String]) {
    scenario = file.name
    source = file.source
    policy = policyName
    self.seed = seed
    traceHash = world.trace.hash
    self.anomalies = anomalies
    countsByKind = [Int](repeating: 0, count: AnomalyKind.allCases.count)
    for a in anomalies { countsByKind[a.kind.ordinal] += 1 }
    self.converged = converged
    stats = RunStats(
      events: world.eventsProcessed, messages: world.messagesSent, simulatedTime: world.now,
      intents: world.log.intents.count, ignoredIntents: world.log.intents.filter { $0.ignored != nil }.count)
    ignored = world.log.intents.compactMap { i in
      i.ignored.map { "i\(i.id) (\(world.config.deviceNames[Int(i.device)]) \(i.kind.verb) \(recordNames[Int(i.record)]) at \(i.trueTime)): \($0)" }
    }
    expectations = []
    let checker = ExpectationChecker(world: world, recordNames: recordNames, report: self)
    let expects = file.expectations.isEmpty
      ? [Expectation(kind: .noViolations, text: "expect no violations (implied)", location: SourceLocation(line: 0, column: 0))]
      : file.expectations
    expectations = expects.map(checker.check)
  }
}

func shellQuote(_ s: String) -> String {
  let safe = s.unicodeScalars.allSatisfy { ($0.properties.isAlphabetic && $0.isASCII) || "0123456789-_./=".unicodeScalars.contains($0) }
  return safe && !s.isEmpty ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
}
