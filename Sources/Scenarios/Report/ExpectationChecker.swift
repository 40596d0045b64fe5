import Replica
@_spi(Kernel) import Simulator

/// Checks `expect` lines against a finished run. Record expectations hold only if they hold on
/// every device and on the server.
struct ExpectationChecker {
  /// What it reads of the run (not the whole world and report: a checker is cheap to copy).
  let devices: [DeviceState]
  /// Per account, the server's records; a record is looked up in its own account's.
  let serverTables: [RecordTable]
  let recordAccounts: [Int32]
  let schema: Schema
  let recordNames: [String]
  let anomalies: [Anomaly]
  let countsByKind: [Int]
  let converged: Bool
  /// `unique=key-name`: records whose create named another record by its key.
  let aliases: [RecordKey: RecordKey]

  init(world: borrowing SyncWorld, recordNames: [String], anomalies: [Anomaly], countsByKind: [Int], converged: Bool) {
    devices = world.devices
    serverTables = world.servers.map(\.records)
    recordAccounts = world.recordAccounts
    schema = world.config.schema
    self.recordNames = recordNames
    self.anomalies = anomalies
    self.countsByKind = countsByKind
    self.converged = converged
    aliases = world.aliases
  }

  /// The account a record belongs to.
  func account(_ key: RecordKey) -> Int { Int(key) < recordAccounts.count && recordAccounts[Int(key)] >= 0 ? Int(recordAccounts[Int(key)]) : 0 }

  /// The server's live copy of a record (nil when absent or deleted), in the database of the
  /// account it belongs to.
  func serverLive(_ key: RecordKey) -> RecordState? { serverTables[account(key)].live(key) }

  /// Device `d`'s visible copy of the record (its store read, not the device: calling a method
  /// of the device copied it whole).
  func visibleRecord(_ d: Int, _ key: RecordKey) -> RecordState? {
    devices.withUnsafeBufferPointer { $0[d].store.live(key) }
  }

  /// Whether device `d` is signed into the account record `key` belongs to (the devices whose
  /// copies an expectation about the record reads).
  func holds(_ d: Int, _ key: RecordKey) -> Bool {
    devices.withUnsafeBufferPointer { $0[d].account.map(Int.init) == account(key) }
  }

  func check(_ e: Expectation) -> ExpectationResult {
    let (passed, actual) = evaluate(e.kind)
    return ExpectationResult(line: e.location.line, text: e.text, passed: passed, actual: passed ? nil : actual())
  }

  /// Whether the expectation held, and what was found instead (text built only when asked:
  /// most expectations hold, and most runs are never printed).
  func evaluate(_ kind: ExpectationKind) -> (Bool, () -> String) {
    func count(_ k: String) -> Int { AnomalyKind(rawValue: k).map { countsByKind[$0.ordinal] } ?? 0 }
    switch kind {
    case .noViolations:
      let n = countsByKind.indices.reduce(0) { $0 + (AnomalyKind.allCases[$1].isViolation ? countsByKind[$1] : 0) }
      return (
        n == 0,
        {
          let v = anomalies.filter(\.kind.isViolation)
          return "\(v.count) violation\(v.count == 1 ? "" : "s"): " + summary(v)
        }
      )
    case .none(let k):
      let n = count(k)
      return (n == 0, { "\(n) \(k)" })
    case .count(let k, let comparison, let value):
      let n = count(k)
      let ok =
        switch comparison {
        case .equal: n == value
        case .atMost: n <= value
        case .atLeast: n >= value
        }
      return (ok, { "\(k) is \(n)" })
    case .converged:
      return (converged, { "not converged" })
    case .exists(let id):
      guard let key = key(id) else { return (true, { "" }) }
      let held = holdersAgree(key) { $0 != nil }
      return (held, { "\(id) is missing on \(holders(id).filter { $0.record == nil }.map(\.name).joined(separator: ", "))" })
    case .deleted(let id):
      guard let key = key(id) else { return (true, { "" }) }
      let held = holdersAgree(key) { $0 == nil }
      return (held, { "\(id) is visible on \(holders(id).filter { $0.record != nil }.map(\.name).joined(separator: ", "))" })
    case .fieldEquals(let id, let field, let literal):
      let (ok, wrong) = fieldCheck(id, field) { Self.same($0, literal) }
      return (ok, { wrong })
    case .fieldIn(let id, let field, let literals):
      let (ok, wrong) = fieldCheck(id, field) { held in literals.contains { Self.same(held, $0) } }
      return (ok, { wrong })
    }
  }

  /// The record a scenario id names (under `unique=key-name`, the record its key names).
  func key(_ id: String) -> RecordKey? {
    recordNames.firstIndex(of: id).map { k in aliases[RecordKey(k)] ?? RecordKey(k) }
  }

  /// Whether `test` holds of the record's visible copy on every device and on the server.
  func holdersAgree(_ key: RecordKey, _ test: (RecordState?) -> Bool) -> Bool {
    for d in devices.indices where holds(d, key) && !test(visibleRecord(d, key)) { return false }
    return test(serverLive(key))
  }

  func summary(_ anomalies: [Anomaly]) -> String {
    var byKind: [(AnomalyKind, Int)] = []
    for k in AnomalyKind.allCases {
      let n = anomalies.filter { $0.kind == k }.count
      if n > 0 { byKind.append((k, n)) }
    }
    return byKind.map { "\($0.1) \($0.0.rawValue)" }.joined(separator: ", ")
  }

  func holders(_ id: String) -> [(name: String, record: RecordState?)] {
    guard let key = key(id) else { return [] }
    return devices.indices.filter { holds($0, key) }.map { (devices[$0].config.name, visibleRecord($0, key)) }
      + [("the server", serverLive(key))]
  }

  func fieldCheck(_ id: String, _ field: String, _ accept: (Literal) -> Bool) -> (Bool, String) {
    guard let key = key(id) else { return (true, "") }
    var wrong: [String] = []
    // Every device, then the server (as ``holders(_:)`` lists them), read in place.
    for holder in 0...devices.count where holder == devices.count || holds(holder, key) {
      let record =
        holder < devices.count
        ? visibleRecord(holder, key) : serverLive(key)
      var name: String { holder < devices.count ? devices.withUnsafeBufferPointer { $0[holder].config.name } : "the server" }
      guard let record else {
        wrong.append("\(name): \(id) is missing")
        continue
      }
      let type = schema.types[Int(record.type)]
      guard let f = type.fieldIndex(named: field) else { return (false, "\(type.name) has no field \(field)") }
      let literal = Self.literal(record.fields[f].value, recordNames: recordNames)
      if !accept(literal) { wrong.append("\(name): \(literal)") }
    }
    return (wrong.isEmpty, wrong.joined(separator: "; "))
  }

  /// Whether a held value's literal is the expected one: equal, or a double equal to the whole
  /// number written for it (`expect p.price == 42` of a double field holding 42.0).
  static func same(_ held: Literal, _ expected: Literal) -> Bool {
    if case .double(let d) = held, case .int(let n) = expected { return Double(exactly: n) == d }
    return held == expected
  }

  /// A stored value as the literal a scenario would write for it.
  static func literal(_ v: Value, recordNames: [String]) -> Literal {
    switch v {
    case .null: .identifier("nil")
    case .string(let s): .string(s)
    case .text(let t): .string(t.string)
    case .int(let i): .int(i)
    case .bool(let b): .bool(b)
    case .date(let ns): .duration(SimDuration(nanoseconds: ns))
    case .double(let d): .double(d)
    case .bytes(let b): .bytes(b)
    case .content(let c): .content(name: c.name, size: c.size, isAsset: c.isAsset)
    case .ref(let k): .identifier(Int(k) < recordNames.count ? recordNames[Int(k)] : "r\(k)")
    }
  }
}
