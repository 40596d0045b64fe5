import Replica
@_spi(Kernel) import Simulator

/// Checks `expect` lines against a finished run. Record expectations hold only if they hold on
/// every device and on the server.
struct ExpectationChecker {
  let world: SyncWorld
  let recordNames: [String]
  let report: RunReport

  func check(_ e: Expectation) -> ExpectationResult {
    let (passed, actual) = evaluate(e.kind)
    return ExpectationResult(line: e.location.line, text: e.text, passed: passed, actual: passed ? nil : actual)
  }

  func evaluate(_ kind: ExpectationKind) -> (Bool, String) {
    func count(_ k: String) -> Int { AnomalyKind(rawValue: k).map { report.count($0) } ?? 0 }
    switch kind {
    case .noViolations:
      let v = report.violations
      return (v.isEmpty, "\(v.count) violation\(v.count == 1 ? "" : "s"): " + summary(v))
    case .none(let k):
      let n = count(k)
      return (n == 0, "\(n) \(k)")
    case .count(let k, let comparison, let value):
      let n = count(k)
      let ok =
        switch comparison {
        case .equal: n == value
        case .atMost: n <= value
        case .atLeast: n >= value
        }
      return (ok, "\(k) is \(n)")
    case .converged:
      return (report.converged, "not converged")
    case .exists(let id):
      let missing = holders(id).filter { $0.record == nil }.map(\.name)
      return (missing.isEmpty, "\(id) is missing on \(missing.joined(separator: ", "))")
    case .deleted(let id):
      let present = holders(id).filter { $0.record != nil }.map(\.name)
      return (present.isEmpty, "\(id) is visible on \(present.joined(separator: ", "))")
    case .fieldEquals(let id, let field, let literal):
      return fieldCheck(id, field) { $0 == literal }
    case .fieldIn(let id, let field, let literals):
      return fieldCheck(id, field) { literals.contains($0) }
    }
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
    guard let index = recordNames.firstIndex(of: id) else { return [] }
    let key = RecordKey(index)
    return world.devices.map { ($0.config.name, $0.visibleRecord(key)) }
      + [("the server", world.server.records[key].flatMap { $0.isDeleted ? nil : $0 })]
  }

  func fieldCheck(_ id: String, _ field: String, _ accept: (Literal) -> Bool) -> (Bool, String) {
    var wrong: [String] = []
    for (name, record) in holders(id) {
      guard let record else {
        wrong.append("\(name): \(id) is missing")
        continue
      }
      let type = world.config.schema.types[Int(record.type)]
      guard let f = type.fieldIndex(named: field) else { return (false, "\(type.name) has no field \(field)") }
      let literal = Self.literal(record.fields[f].value, recordNames: recordNames)
      if !accept(literal) { wrong.append("\(name): \(literal)") }
    }
    return (wrong.isEmpty, wrong.joined(separator: "; "))
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
    case .ref(let k): .identifier(Int(k) < recordNames.count ? recordNames[Int(k)] : "r\(k)")
    }
  }
}
