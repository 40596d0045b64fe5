import Replica
@_spi(Kernel) import Simulator

extension Oracle {
  /// The final states the schema rules are judged on: every signed-in device's visible
  /// records, then each account's server's live records, each with who holds it.
  func finalViews() -> [(holder: String, device: Int32?, records: [RecordState])] {
    var views: [(holder: String, device: Int32?, records: [RecordState])] = []
    for d in world.devices.indices where world.devices[d].account != nil {
      views.append((deviceName(Int32(d)), Int32(d), world.visibleRecords(device: d)))
    }
    for (a, server) in world.servers.enumerated() {
      views.append((world.servers.count == 1 ? "the server" : "the server of \(words.account(Int32(a)))", nil, server.liveRecords))
    }
    return views
  }

  /// `dangling-reference`: after settle, a live record refers to a record that no device and no
  /// server holds (an orphan). One anomaly per record and field, naming who shows it. (Read in
  /// place: most runs have references and none dangles.)
  mutating func judgeReferences() {
    let rules = world.context.rules
    guard rules.hasReferences else { return }
    let signedIn = world.devices.indices.filter { world.devices[$0].account != nil }
    var n = 0
    for d in signedIn { n = max(n, world.devices[d].store.capacity) }
    for server in world.servers { n = max(n, server.records.capacity) }
    var liveAnywhere = [Bool](repeating: false, count: n)
    for d in signedIn {
      for k in 0..<world.devices[d].store.capacity where world.devices[d].store.isLive(RecordKey(k)) { liveAnywhere[k] = true }
    }
    for server in world.servers {
      for k in 0..<server.records.capacity where server.records.isLive(RecordKey(k)) { liveAnywhere[k] = true }
    }
    func dangling(in table: RecordTable, _ body: (RecordKey, Int32, RecordKey) -> Void) {
      for k in 0..<table.capacity {
        let key = RecordKey(k)
        guard table.isLive(key), let type = table.type(of: key) else { continue }
        for (field, _) in rules.refFields[Int(type)] {
          guard let target = table.reference(key, field: Int(field)), Int(target) >= n || !liveAnywhere[Int(target)] else { continue }
          body(key, field, target)
        }
      }
    }
    // (record, field) → who shows it dangling, and the value's writer there.
    var found: [(key: RecordKey, field: Int32, target: RecordKey, writer: IntentID, holders: [String], devices: [Int32])] = []
    func note(_ key: RecordKey, _ field: Int32, _ target: RecordKey, writer: IntentID, holder: String, device: Int32?) {
      if let i = found.firstIndex(where: { $0.key == key && $0.field == field }) {
        found[i].holders.append(holder)
        if let device { found[i].devices.append(device) }
      } else {
        found.append((key, field, target, writer, [holder], device.map { [$0] } ?? []))
      }
    }
    for d in signedIn {
      let table = world.devices[d].store
      dangling(in: table) { key, field, target in
        note(key, field, target, writer: table[key]?.fields[Int(field)].writer ?? 0, holder: deviceName(Int32(d)), device: Int32(d))
      }
    }
    for (a, server) in world.servers.enumerated() {
      let holder = world.servers.count == 1 ? "the server" : "the server of \(words.account(Int32(a)))"
      dangling(in: server.records) { key, field, target in
        note(key, field, target, writer: server.records[key]?.fields[Int(field)].writer ?? 0, holder: holder, device: nil)
      }
    }
    for f in found {
      guard let type = world.serverRecord(f.key)?.type ?? typeOf(f.key) else { continue }
      let spec = schema.types[Int(type)].fields[Int(f.field)]
      let deletes = Int(f.target) < byRecord.count ? byRecord[Int(f.target)].filter { $0.isDelete } : []
      let fate: String
      if let d = deletes.first {
        fate = "\(name(f.target)) was deleted in \(describe(d))"
      } else {
        fate = "\(name(f.target)) is on no device and not on the server"
      }
      let rule: String
      switch spec.onDelete {
      case .cascade: rule = "its delete rule (on-delete cascade) should have deleted \(name(f.key))"
      case .nullify: rule = "its delete rule (on-delete nullify) should have cleared the reference"
      case .deny: rule = "its delete rule (on-delete deny) should have refused the delete"
      }
      let why =
        world.config.policy.settings.references == .localOnly
        ? ", but the rules ran only on the device that deleted (references=local-only)" : ", but it never ran there"
      var intents = [Self.id(f.writer)].filter { $0.id != 0 }
      intents += deletes.prefix(1).map { Self.id($0.id) }
      anomalies.append(
        Anomaly(
          kind: .danglingReference, record: recordRef(f.key),
          field: FieldRef(index: Int(f.field), name: spec.name), intents: intents, devices: f.devices.map(deviceRef),
          at: deletes.first?.trueTime ?? .zero,
          explanation:
            "\(name(f.key)).\(spec.name) refers to \(name(f.target)) on \(f.holders.joined(separator: ", ")) after settle, and \(fate); \(rule)\(why)."
        ))
    }
  }

  /// `dangling-reference`, the other way round: after settle, a record no user deleted is gone
  /// everywhere because a cascade deleted it — for a record it referred to — although every
  /// device that deleted that record knew the child no longer referred to it: each deleting
  /// device showed the child, knew every write naming the parent that the cascade went by,
  /// and of the writes of the referring field it had received, none of the latest named the
  /// deleted record. (A deleting device that did not show the child, or did not know the
  /// reference the cascade went by, or knew the child referred to the deleted record,
  /// justifies the cascade: that child was the user's to delete, or one filed there meanwhile.)
  mutating func judgeCascades() {
    let cascades = world.facts.cascades
    guard !cascades.isEmpty else { return }
    var knowledge: [IntentID: DeleteKnowledge] = [:]
    for k in world.facts.deleteKnowledge { knowledge[k.delete] = k }
    // Each cascaded record's cascades in the order they ran, the records in the order of their
    // first (one pass, not one per record); and the records a de-duplication kept another
    // instead of.
    var cascadesOf: [RecordKey: [Cascade]] = [:]
    var records: [RecordKey] = []
    for c in cascades {
      let x = log.origin(c.intent).record
      if cascadesOf[x] == nil { records.append(x) }
      cascadesOf[x, default: []].append(c)
    }
    var keptAnother: Set<RecordKey> = []
    for i in log.intents where i.keptInstead != nil { keptAnother.insert(i.record) }
    for x in records {
      guard Int(x) < byRecord.count else { continue }
      let intents = byRecord[Int(x)]
      // A record a user deleted, or one still shown somewhere, lost nothing to a cascade.
      guard !intents.contains(where: { $0.isDelete && $0.trigger == 0 }), !keptAnother.contains(x),
        !world.devices.indices.contains(where: { world.shows(device: $0, x) }), !world.serverIsLive(x)
      else { continue }
      var evidence: (cascade: Intent, delete: Intent, write: Intent?, field: Int32)?
      var justified = false
      for other in cascadesOf[x] ?? [] {
        // What the cascade went by: the latest writes of the field its device had received.
        let cascade = log[other.intent]
        let basis = intents.filter { w in w.id != cascade.id && cascade.context.contains(w.ordinal) && w.writtenFields.contains(other.field) }
        let naming = basis.filter { w in !basis.contains { w.happenedBefore($0) } && Self.writtenValue(w, field: other.field) == .ref(other.parent) }
        let deletes = Int(other.parent) < byRecord.count ? byRecord[Int(other.parent)].filter { $0.isDelete } : []
        for d in deletes {
          guard let k = knowledge[d.id], let i = k.records.firstIndex(of: x) else {
            justified = true
            break
          }
          let known = k.contexts[i]
          // A reference the deleting device did not know of (a child filed there meanwhile).
          if naming.contains(where: { !known.contains($0.ordinal) }) {
            justified = true
            break
          }
          let writes = intents.filter { w in known.contains(w.ordinal) && w.writtenFields.contains(other.field) }
          let latest = writes.filter { w in !writes.contains { w.happenedBefore($0) } }
          if latest.contains(where: { Self.writtenValue($0, field: other.field) == .ref(other.parent) }) {
            justified = true
            break
          }
          if evidence == nil { evidence = (log[other.intent], d, latest.first, other.field) }
        }
        if justified { break }
      }
      guard !justified, let e = evidence, let type = typeOf(x) else { continue }
      let field = fieldName(type, e.field)
      let parent = name(log[e.delete.id].record)
      let knew =
        e.write.map { w in
          "\(describe(w)) had set \(name(x)).\(field) to \(Self.writtenValue(w, field: e.field).map(render) ?? "nothing"), so \(name(x)) no longer referred to \(parent)"
        } ?? "\(name(x)).\(field) had never been set to it"
      anomalies.append(
        Anomaly(
          kind: .danglingReference, record: recordRef(x), field: FieldRef(index: Int(e.field), name: field),
          intents: [Self.id(e.cascade.id), Self.id(e.delete.id)] + (e.write.map { [Self.id($0.id)] } ?? []),
          devices: [deviceRef(e.cascade.device)], at: e.cascade.trueTime,
          explanation:
            "a cascade deleted \(name(x)), which no user deleted: \(describe(e.cascade)) ran \(name(x)).\(field)'s delete rule (on-delete cascade) for \(describe(e.delete)), but \(deviceName(e.delete.device)) deleted \(parent) knowing that \(knew); \(deviceName(e.cascade.device)) cascaded from a copy that did not have that change yet\(world.config.policy.settings.references == .eager ? " (references=eager: it ran the rules on the fetched deletes before applying the rest of the batch)" : "")."
        ))
    }
  }

  /// The value intent `i` wrote to `field` (a create's or set's last write of it), if any.
  static func writtenValue(_ i: Intent, field: Int32) -> Value? {
    switch i.kind {
    case .create(_, let values), .set(let values): values.last { $0.field == field }?.value
    default: nil
    }
  }

  /// `logical-duplicate`: after settle, two live records of a `singleton` or `unique-by` type
  /// share their key in one account. One anomaly per set of duplicates, on the first record.
  mutating func judgeUniqueness() {
    guard world.context.rules.hasUniqueness else { return }
    var groups: [(records: [RecordKey], type: Int32, holders: [String], devices: [Int32])] = []
    for v in finalViews() {
      var byKey: [UniqueKey: [RecordKey]] = [:]
      var order: [UniqueKey] = []
      for r in v.records {
        guard let keyFields = schema.types[Int(r.type)].uniqueKeyFields else { continue }
        let k = UniqueKey(account: Int32(world.account(ofRecord: r.key)), type: r.type, values: keyFields.map { r.fields[$0].value })
        if byKey[k] == nil { order.append(k) }
        byKey[k, default: []].append(r.key)
      }
      for k in order {
        let records = byKey[k]!.sorted()
        guard records.count > 1 else { continue }
        if let i = groups.firstIndex(where: { $0.records == records }) {
          groups[i].holders.append(v.holder)
          if let d = v.device { groups[i].devices.append(d) }
        } else {
          groups.append((records, k.type, [v.holder], v.device.map { [$0] } ?? []))
        }
      }
    }
    for g in groups {
      let type = schema.types[Int(g.type)]
      let creates = g.records.compactMap { k in Int(k) < byRecord.count ? byRecord[Int(k)].first { $0.isCreate } : nil }
      let shape: String
      switch type.uniqueness {
      case .singleton?: shape = "\(type.name) is a singleton"
      case .fields(let f)?: shape = "\(type.name) is unique by \(f.map { type.fields[$0].name }.joined(separator: ", "))"
      case nil: continue
      }
      let made = creates.map { describe($0) }.joined(separator: " and ")
      let advice =
        world.config.policy.settings.unique == .ignore
        ? "each device named its record at random (unique=ignore); a record name derived from the key makes them one record (unique=key-name)"
        : "CloudKit cannot prevent it"
      anomalies.append(
        Anomaly(
          kind: .logicalDuplicate, record: recordRef(g.records[0]), intents: creates.map { Self.id($0.id) }, devices: g.devices.map(deviceRef),
          at: creates.last?.trueTime ?? .zero,
          explanation:
            "\(shape), but \(g.records.map(name).joined(separator: " and ")) are all live on \(g.holders.joined(separator: ", ")) after settle (\(made)): \(advice)."
        ))
    }
  }

  /// For a record gone everywhere that no user deleted: nil when no de-duplication deleted it
  /// either; otherwise `.some(nil)` when everything written to it is on a duplicate the engine
  /// kept instead (live on the server: each field's last write there, no text edit), else why
  /// it is a loss, as a clause (`: iPad deleted it at 20.2s as a duplicate of s2 …`).
  func deduplicationLoss(_ key: RecordKey, _ intents: [Intent]) -> String?? {
    let dedupes = log.intents.filter { $0.record == key && $0.keptInstead != nil && $0.ignored == nil }
    guard let first = dedupes.first, let kept = first.keptInstead else { return nil }
    let how = ": \(deviceName(first.device)) deleted it at \(first.trueTime) as a duplicate of \(name(kept)), keeping its own copy (unique=dedupe)"
    let survivors = dedupes.compactMap(\.keptInstead).filter { serverLive($0) != nil }
    guard let survivor = survivors.first.flatMap(serverLive) else {
      // Why the copy it kept is gone as well: the same race on another device, or a delete.
      if log.intents.contains(where: { $0.record == kept && $0.keptInstead != nil && $0.ignored == nil }) {
        return .some(how + ", and \(name(kept)) is gone too: devices that fetched each other's copies at once each deleted the other's")
      }
      let delete = Int(kept) < byRecord.count ? byRecord[Int(kept)].first { $0.isDelete } : nil
      return .some(how + ", and \(name(kept)) is gone too" + (delete.map { " (\(describe($0)))" } ?? ""))
    }
    var lastWrites: [Int32: (intent: Intent, value: Value?)] = [:]
    for i in intents {
      switch i.kind {
      case .create(_, let values), .set(let values): for w in values { lastWrites[w.field] = (i, w.value) }
      case .append(let f, _), .replace(let f, _, _, _): lastWrites[f] = (i, nil)
      case .delete: break
      }
    }
    for f in lastWrites.keys.sorted() {
      let (i, value) = lastWrites[f]!
      let kept = survivor.fields[Int(f)].value
      guard let value, sameVisible(value, kept) else {
        let field = fieldName(survivor.type, f)
        return .some(how + "; \(name(survivor.key)).\(field) is \(render(kept)): \(describe(i, field: f)) wrote to the deleted copy only")
      }
    }
    return .some(nil)
  }

  /// The type of a record, from its create intent.
  func typeOf(_ key: RecordKey) -> Int32? {
    guard Int(key) < byRecord.count, let c = byRecord[Int(key)].first(where: { $0.isCreate }), case .create(let t, _) = c.kind else { return nil }
    return t
  }
}

/// A unique key as the oracle compares them: account, type, key values.
struct UniqueKey: Hashable {
  var account: Int32
  var type: Int32
  var values: [Value]
}

extension Intent {
  /// Whether the intent is a create.
  var isCreate: Bool {
    if case .create = kind { return true }
    return false
  }
}
