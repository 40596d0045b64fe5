import Replica
@_spi(Kernel) import Simulator

extension ScenarioFile {
  /// The scenario as canonical scenario text: header, types, the timeline sorted by time, `settle`,
  /// expectations. `ScenarioParser.parse(rendered(), source:)` gives back an equal file, apart
  /// from `source` and source locations — this is how the shrinker writes a failing run.
  ///
  /// Limits: an `exponential` latency cannot be written and is written as `latency MEAN` (fixed);
  /// a probability must be a whole number of millionths of a percent (every parsed one is);
  /// names and ids must be valid (`[A-Za-z][A-Za-z0-9_-]*`), as every parsed one is.
  public func rendered() -> String {
    var out = ""
    func line(_ s: String) { out += s + "\n" }

    line("scenario " + (DeclarationParser.isIdentifier(name) ? name : Self._string(name)))
    if let about { line("about " + Self._string(about)) }
    line("")
    line("devices " + devices.joined(separator: " "))
    if policyLocation != nil || policy != DeclarationParser.defaultPolicy { line("policy \(policy)") }
    line("seed \(seed)")
    line("")
    switch latency {
    case .fixed(let d): line("latency \(d)")
    case .uniform(let low, let high): line("latency \(low)..\(high)")
    case .exponential(_, let mean): line("latency \(mean)")
    }
    if !loss.isZero { line("loss \(loss)") }
    if !duplicate.isZero { line("duplicate \(duplicate)") }
    for c in clocks {
      line("clock \(c.device) skew \(Self._signed(c.skew))" + (c.driftPPM == 0 ? "" : " drift \(c.driftPPM)ppm"))
    }
    for b in bandwidth { line("bandwidth " + (b.device.map { "\($0) " } ?? "") + BandwidthSetting.format(b.bitsPerSecond)) }
    if let retention { line("retention \(retention)") }
    if autosync != .seconds(1) { line("autosync " + (autosync.map(\.description) ?? "off")) }
    switch push {
    case .on: break
    case .off: line("push off")
    case .lossy(let p): line("push \(p)")
    }
    if let deployed = schema.deployed { line((["deployed"] + deployed).joined(separator: " ")) }
    for a in accounts { line((["account", a.name] + a.devices).joined(separator: " ")) }
    for v in appVersions { line((["app-version", String(v.version)] + v.devices).joined(separator: " ")) }
    let defaults = ServerConditions()
    if let quota = server.quota {
      line("quota \(ByteCount.format(quota))" + (server.usedByOthers == 0 ? "" : " used \(ByteCount.format(server.usedByOthers))"))
    }
    if let t = server.throttle, t.perDevice != nil || t.app != nil {
      line("throttle" + (t.perDevice.map { " device \($0)" } ?? "") + (t.app.map { " app \($0)" } ?? ""))
    }
    if server.atomic { line("zone atomic") }
    if server.checksReferences { line("references checked") }
    if server.engineFetchesFirst { line("engine fetch-first") }
    if server.maxRecordsPerRequest != defaults.maxRecordsPerRequest || server.maxBytesPerRequest != defaults.maxBytesPerRequest {
      line("limits \(server.maxRecordsPerRequest) records \(ByteCount.format(server.maxBytesPerRequest))")
    }

    if let schemaSource {
      line("")
      line("# the types below were imported by `schema from \(schemaSource)`")
    }
    for type in schema.types {
      line("")
      line("type \(type.name)" + Self._typeModifiers(type))
      for field in type.fields { line("  " + Self._field(field, typeSince: type.since)) }
    }

    line("")
    let sorted = timeline.enumerated().sorted {
      ($0.element.time, $0.element.action == .settle ? 1 : 0, $0.offset) < ($1.element.time, $1.element.action == .settle ? 1 : 0, $1.offset)
    }.map(\.element)
    for entry in sorted { line("at \(entry.time) " + Self._action(entry.action, zones: recordZones)) }
    if !timeline.contains(where: { $0.action == .settle }) { line("settle") }

    if !expectations.isEmpty { line("") }
    for e in expectations { line(Self._expectation(e)) }
    return out
  }

  /// A string literal, escaped scalar by scalar (`Literal.description` escapes by `Character`,
  /// which misses a quote or backslash that a combining mark follows).
  static func _string(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
      switch u {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      default: out.unicodeScalars.append(u)
      }
    }
    return out + "\""
  }

  static func _literal(_ literal: Literal) -> String {
    if case .string(let s) = literal { return _string(s) }
    return literal.description
  }

  static func _signed(_ d: SimDuration) -> String {
    d.nanoseconds < 0 ? d.description : "+\(d)"
  }

  static func _typeModifiers(_ type: RecordType) -> String {
    var s = type.appendOnly ? " append-only" : ""
    switch type.uniqueness {
    case nil: break
    case .singleton: s += " singleton"
    case .fields(let f): s += " unique-by " + f.map { type.fields[$0].name }.joined(separator: ",")
    }
    if type.since > 1 { s += " since \(type.since)" }
    return s
  }

  static func _field(_ f: FieldSpec, typeSince: Int = 1) -> String {
    var s = "\(f.name): \(f.kind)" + (f.optional ? "?" : "")
    switch f.defaultValue {
    case nil, .null?, .ref?, .content?: break
    case .string(let v)?: s += " = " + _string(v)
    case .text(let v)?: s += " = " + _string(v.string)
    case .int(let n)?: s += " = \(n)"
    case .bool(let b)?: s += " = \(b)"
    case .date(let ns)?: s += " = \(SimDuration(nanoseconds: ns))"
    case .double(let d)?: s += " = " + Literal.spelled(d)
    case .bytes(let b)?: s += " = " + Literal.spelled(b)
    }
    if f.mutable { s += " mutable" }
    if f.encrypted { s += " encrypted" }
    if f.unique { s += " unique" }
    if f.referencedType != nil, f.onDelete != .nullify { s += " on-delete \(f.onDelete.rawValue)" }
    if f.referencedType != nil, f.ordered { s += " ordered" }
    if f.referencedType != nil, !f.hasInverse { s += " no-inverse" }
    if f.referencedType != nil, f.isParent { s += " parent" }
    if f.since > typeSince { s += " since \(f.since)" }
    return s
  }

  static func _assignments(_ fields: [Assignment]) -> String {
    fields.map { " \($0.field)=" + _literal($0.value) }.joined()
  }

  static func _action(_ action: TimelineAction, zones recordZones: [String: String] = [:]) -> String {
    switch action {
    case .create(let device, let type, let id, let fields):
      "\(device) create \(type) \(id)" + (recordZones[id].map { " in \($0)" } ?? "") + _assignments(fields)
    case .set(let device, let id, let fields): "\(device) set \(id)" + _assignments(fields)
    case .append(let device, let id, let field, let text): "\(device) append \(id).\(field) " + _string(text)
    case .replace(let device, let id, let field, let old, let new): "\(device) replace \(id).\(field) \(_string(old)) \(_string(new))"
    case .delete(let device, let id): "\(device) delete \(id)"
    case .sync(let device): "\(device) sync"
    case .send(let device): "\(device) send"
    case .fetch(let device): "\(device) fetch"
    case .kill(let device): "\(device) kill"
    case .background(let device, let budget): "\(device) background \(budget)"
    case .clockJump(let device, let by): "\(device) clock \(_signed(by))"
    case .deleteZone(let device): "\(device) delete-zone"
    case .purgeZone(let device): "\(device) purge-zone"
    case .signOut(let device): "\(device) sign-out"
    case .upgrade(let device, let version): "\(device) upgrade \(version)"
    case .file(let device, let id, let field, let changed): "\(device) \(changed ? "change-file" : "delete-file") \(id).\(field)"
    case .purgeStaging(let device): "\(device) purge-staging"
    case .sharing(let device, let statement): "\(device) \(statement.text)"
    case .signIn(let device, let account, let isSwitch): "\(device) \(isSwitch ? "switch-account" : "sign-in") \(account)"
    case .encryptedDataReset: "encrypted-data-reset"
    case .syncAll: "sync"
    case .offline(let devices): (["offline"] + devices).joined(separator: " ")
    case .online(let devices): (["online"] + devices).joined(separator: " ")
    case .serverDown: "server down"
    case .serverUp: "server up"
    case .free(let bytes): "free \(ByteCount.format(bytes))"
    case .reject(let ids, let error, let retryAfter, let duration):
      (["reject"] + ids + ["with", error.rawValue]).joined(separator: " ") + (retryAfter.map { " retry-after \($0)" } ?? "") + " for \(duration)"
    case .settle: "settle"
    }
  }

  /// The expectation's own text when it still says the same thing, else its canonical form.
  static func _expectation(_ e: Expectation) -> String {
    let canonical = _canonical(e.kind)
    guard e.text != canonical, e.text.hasPrefix("expect ") else { return canonical }
    let session = ScenarioParse(source: "", text: e.text)
    guard session.lines.count == 1, session.diagnostics.isEmpty else { return canonical }
    let line = session.lines[0]
    if !line.indented, line.contentEnd == line.scalarCount, line.trimmedContent == e.text, _syntacticKind(session) == e.kind {
      return e.text
    }
    return canonical
  }

  /// The expectation a lone `expect` line states, ignoring whether its ids and fields exist.
  static func _syntacticKind(_ session: ScenarioParse) -> ExpectationKind? {
    var timeline = TimelineParser(session: session, declared: DeclarationParser(session: session))
    // Make every id resolvable and every field unknown-type, so that only the syntax is judged.
    for token in session.lines[0].tokens where token.isWord {
      let id = token.text.split(separator: ".", maxSplits: 1).first.map(String.init) ?? token.text
      if TimelineParser.isIdentifier(id), timeline.creates[id] == nil { timeline.creates[id] = ("", 0) }
    }
    let kind = timeline.expectationKind(0)
    return session.diagnostics.isEmpty ? kind : nil
  }

  static func _canonical(_ kind: ExpectationKind) -> String {
    switch kind {
    case .noViolations: "expect no violations"
    case .none(let k): "expect no \(k)"
    case .count(let k, let comparison, let n): "expect \(k) \(comparison.rawValue) \(n)"
    case .converged: "expect converged"
    case .fieldEquals(let id, let field, let value): "expect \(id).\(field) == " + _literal(value)
    case .fieldIn(let id, let field, let values): "expect \(id).\(field) in " + values.map(_literal).joined(separator: " ")
    case .exists(let id): "expect \(id) exists"
    case .deleted(let id): "expect \(id) deleted"
    }
  }
}
