/// A unique key: the account, the type, and the values of its key fields (none for a singleton).
struct UniqueName: Hashable, Sendable {
  var account: Int32
  var type: Int32
  var values: [Value]
}

extension SyncWorld {
  /// The record `key` is, once names derived from unique keys are resolved (`unique=key-name`):
  /// itself, unless its create named a record another create already made.
  package func canonical(_ key: RecordKey) -> RecordKey { aliases.isEmpty ? key : aliases[key] ?? key }

  /// Resolves a user intent's records under `unique=key-name`: a create of a unique type whose
  /// key another create in the account already used names that record (its name is derived
  /// from the key), and every later intent on it, and every reference to it, goes there too.
  mutating func resolvingNames(_ intent: UserIntent, device d: Int32) -> UserIntent {
    guard context.rules.hasUniqueness, env.settings.unique == .keyName else { return intent }
    switch intent {
    case .create(let type, let key, let values):
      let values = Self.resolved(values, aliases: aliases)
      guard let keyFields = context.schema.types[Int(type)].uniqueKeyFields else { return .create(type: type, key: key, values: values) }
      let spec = context.schema.types[Int(type)]
      var keyValues: [Value] = []
      for f in keyFields {
        keyValues.append(values.last { Int($0.field) == f }?.value ?? spec.fields[f].initialValue)
      }
      let name = UniqueName(account: deviceAccount(Int(d)) ?? lastAccounts[Int(d)], type: type, values: keyValues)
      if let existing = keyNames[name], existing != key {
        aliases[key] = existing
        return .create(type: type, key: existing, values: values)
      }
      keyNames[name] = key
      return .create(type: type, key: key, values: values)
    case .set(let key, let values): return .set(key: canonical(key), values: Self.resolved(values, aliases: aliases))
    case .append(let key, let field, let text): return .append(key: canonical(key), field: field, text: text)
    case .replace(let key, let field, let old, let new): return .replace(key: canonical(key), field: field, old: old, new: new)
    case .delete(let key): return .delete(key: canonical(key))
    }
  }

  func resolved(_ write: FieldWrite) -> FieldWrite {
    guard !aliases.isEmpty, case .ref(let k) = write.value else { return write }
    return FieldWrite(field: write.field, value: .ref(canonical(k)))
  }

  /// `resolved(_:)` over writes, reading only `aliases` (a method reference or a closure over
  /// `self` in a mutating method copies the whole world per call).
  static func resolved(_ writes: [FieldWrite], aliases: [RecordKey: RecordKey]) -> [FieldWrite] {
    guard !aliases.isEmpty else { return writes }
    return writes.map { w in
      guard case .ref(let k) = w.value else { return w }
      return FieldWrite(field: w.field, value: .ref(aliases[k] ?? k))
    }
  }

  /// Runs the schema's delete rules on device `d` for the record `deleted` it just deleted, or
  /// learned was deleted (by intent `trigger`): each live record there that refers to it is
  /// deleted (`cascade`, and so on down) or has the reference cleared (`nullify`), as intents
  /// the device makes at once. `type` is the deleted record's, when the device no longer has it.
  mutating func runDeleteRules(device d: Int32, deleted key: RecordKey, by trigger: IntentID, type: Int32? = nil) {
    guard context.rules.hasReferences, let type = type ?? devices[Int(d)].store.type(of: key) ?? typeOfRecord(key),
      !context.rules.referrers[Int(type)].isEmpty
    else { return }
    for (child, referrer) in devices[Int(d)].store.referrers(of: key, type: type, rules: context.rules) {
      // An earlier cascade in this loop may have taken it already.
      guard devices[Int(d)].shows(child) else { continue }
      apply(referrer.rule, to: child, field: referrer.field, parent: key, device: d, trigger: trigger, childType: referrer.type)
    }
  }

  /// A delete rule's intent on `child`, whose `field` refers to the deleted record `parent`.
  mutating func apply(
    _ rule: DeleteRule, to child: RecordKey, field: Int32, parent: RecordKey, device d: Int32, trigger: IntentID, childType: Int32? = nil
  ) {
    switch rule {
    case .cascade:
      let intent = performIntent(device: d, .delete(key: child), trigger: trigger)
      if intent.ignored == nil {
        facts.cascades.append(Cascade(intent: intent.id, parent: parent, field: field))
        // (An app keeps no tombstone, and a record it never sent is nowhere else: its type is
        // the referrer's.)
        runDeleteRules(device: d, deleted: child, by: trigger, type: drivers.isEmpty ? nil : childType)
      }
    case .nullify:
      performIntent(device: d, .set(key: child, values: [FieldWrite(field: field, value: .null)]), trigger: trigger)
    case .deny:
      break
    }
  }

  /// `references=propagate`: after a fetch changed records on device `d`, runs the delete rules
  /// there — for a deletion it applied, on its records that refer to the deleted one; for a
  /// record it applied that refers to a record it knows is deleted, on that record.
  mutating func propagateDeleteRules(device d: Int32) {
    let checks = devices[Int(d)].takeRuleChecks()
    guard env.settings.references != .localOnly else { return }
    for (key, type) in checks {
      if !devices[Int(d)].shows(key) {
        if let known = devices[Int(d)].knownDeletes[key], let by = trigger(for: known, deleted: key) {
          runDeleteRules(device: d, deleted: key, by: by, type: type)
        }
        continue
      }
      for (field, _) in context.rules.refFields[Int(type)] {
        guard devices[Int(d)].shows(key), let parent = devices[Int(d)].store.reference(key, field: Int(field)),
          let by = devices[Int(d)].knownDeletes[parent].flatMap({ trigger(for: $0, deleted: parent) }), !devices[Int(d)].shows(parent)
        else { continue }
        apply(context.schema.types[Int(type)].fields[Int(field)].onDelete, to: key, field: field, parent: parent, device: d, trigger: by)
      }
    }
  }

  /// Records what device `d` knew, as it made `delete`, of every live record it shows of a type
  /// that may refer to the deleted record's (``WorldFacts/deleteKnowledge``).
  mutating func noteDeleteKnowledge(_ delete: Intent, device d: Int32) {
    let rules = context.rules
    guard let type = devices[Int(d)].store.type(of: delete.record) ?? typeOfRecord(delete.record), !rules.referrers[Int(type)].isEmpty
    else { return }
    var knowledge = DeleteKnowledge(delete: delete.id, records: [], contexts: [])
    let store = devices[Int(d)].store
    for k in 0..<store.capacity {
      let key = RecordKey(k)
      guard store.isLive(key), let t = store.type(of: key), rules.referrers[Int(type)].contains(where: { $0.type == t }) else { continue }
      knowledge.records.append(key)
      knowledge.contexts.append(ledgers[Int(d)].context(of: key, log: log))
    }
    facts.deleteKnowledge.append(knowledge)
  }

  /// `unique=dedupe`: after a fetch brought records of a unique type onto device `d`, each one
  /// that duplicates a record the device already showed (or one this fetch brought earlier and
  /// it kept) is deleted — the device keeps its own copy — by an intent the engine makes
  /// (``Intent/keptInstead``), which the oracles do not count as the user's.
  mutating func deduplicate(device d: Int32) {
    let fetched = devices[Int(d)].takeDedupeChecks()
    let schema = context.schema
    func uniqueKey(_ r: RecordState) -> [Value]? {
      schema.types[Int(r.type)].uniqueKeyFields.map { $0.map { r.fields[$0].value } }
    }
    for (i, key) in fetched.enumerated() {
      guard let record = devices[Int(d)].store[key], !record.isDeleted, let values = uniqueKey(record) else { continue }
      let later = fetched[(i + 1)...]
      var kept: RecordKey?
      for other in devices[Int(d)].store.keys where other != key && !later.contains(other) {
        guard let o = devices[Int(d)].store[other], !o.isDeleted, o.type == record.type, uniqueKey(o) == values else { continue }
        // A unique key is unique in one zone: a shared record and one of the account's own are
        // no duplicates.
        if hasSharing, devices[Int(d)].sharedKeys.contains(key) != devices[Int(d)].sharedKeys.contains(other) { continue }
        kept = other
        break
      }
      guard let kept else { continue }
      performIntent(device: d, .delete(key: key), trigger: 0, keeping: kept)
    }
  }

  /// The delete intent a rule's intents are attributed to: the one the device knows, or for a
  /// record that went without the device seeing its delete (with the zone, or missing from a
  /// refetch), the last delete intent of it (nil when there is none: an
  /// encrypted-data reset deletes without an intent).
  func trigger(for known: IntentID, deleted key: RecordKey) -> IntentID? {
    if known != DeviceState.unknownDelete { return known }
    return log.intents.last { $0.record == key && $0.isDelete && $0.ignored == nil }?.id
  }

  /// The type of record `key` as its last create in the log made it.
  func typeFromLog(_ key: RecordKey) -> Int32? {
    log.intents.last(where: { $0.record == key && $0.kind.createdType != nil })?.kind.createdType
  }

  /// The type of record `key`, from any copy of it (a device's or a server's).
  func typeOfRecord(_ key: RecordKey) -> Int32? {
    for d in devices { if let t = d.store.type(of: key) { return t } }
    for s in servers { if let t = s.records.type(of: key) { return t } }
    return nil
  }
}
