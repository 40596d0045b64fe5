@_spi(Kernel) import Simulator

extension DeviceState {
  /// Applies a user intent to the local store, queues it in the outbox, and returns it as the
  /// oracle will see it — without its ordinal and causal context, which the world's
  /// ``CausalLedger`` fills in. An intent that cannot apply — the record is not on this device,
  /// the text to replace is not there — is returned with `ignored` set and changes nothing.
  /// An intent a delete rule makes (`byRule`) does not bring the app to the foreground: the
  /// app's store makes it while applying a delete.
  package mutating func perform(
    _ intent: UserIntent, id: IntentID, in env: DeviceEnvironment, byRule: Bool = false, effects: inout [DeviceEffect]
  ) -> Intent {
    let now = env.now
    let schema = env.context.schema
    if !byRule { foreground() }
    let reading = clock.read(at: now)
    var record = Intent(
      id: id, device: config.index, trueTime: now, deviceTime: reading, record: intent.key, kind: .delete,
      ordinal: 0, context: CausalContext(), ignored: nil)
    func ignore(_ why: String, _ kind: IntentKind) -> Intent {
      record.kind = kind
      record.ignored = why
      return record
    }
    let tick = hlc.tick(now: reading.nanoseconds)
    let stamp = Stamp(clock: reading.nanoseconds, hlcWall: tick.wall, hlcLogical: tick.logical, device: config.rank)
    let key = intent.key
    let live = visibleRecord(key)
    var madeInShare = false
    /// Every write carries the writes of the record its copy had incorporated, and itself (only
    /// with `causalMetadata`: no other policy reads versions, and keeping them costs an array per
    /// record copy). Per record: a device's knowledge of another record says nothing about this
    /// one (a write of this record may never have left its device while a later one of another
    /// record did).
    func stampVersions(_ r: inout RecordState) {
      guard config.causalMetadata else { return }
      r.versions.note(stamp)
    }

    // A user can only refer to a record the app shows.
    switch intent {
    case .create(_, _, let values), .set(_, let values):
      if env.hasReferences,
        values.contains(where: { w in
          if case .ref(let target) = w.value { return !store.isLive(target) }
          return false
        })
      {
        let kind: IntentKind
        if case .create(let type, _, _) = intent { kind = .create(type: type, values: values) } else { kind = .set(values) }
        return ignore("the record it refers to is not on this device, so nothing there can refer to it", kind)
      }
      if config.sharing, env.hasReferences {
        // A reference stays within a zone: a shared record and one of the account's own cannot
        // refer to each other (a record made referring to a shared one is made in its share).
        let crossing = intent.zoneCrossing { sharedKeys.contains($0) }
        if crossing.crosses {
          let kind: IntentKind
          if case .create(let type, _, _) = intent { kind = .create(type: type, values: values) } else { kind = .set(values) }
          return ignore(UserIntent.crossZoneReason, kind)
        }
        if crossing.madeInShare { madeInShare = true }
      }
    default:
      break
    }
    switch intent {
    case .create(let type, _, let values):
      if var r = live, r.type == type, env.context.schema.types[Int(type)].uniqueness != nil {
        // A record name derived from the key (`unique=key-name`): the record another device made
        // is already here, so this create saves its values into it.
        var mask: FieldMask = []
        for w in values {
          r.fields[Int(w.field)] = FieldValue(value: _stamped(w.value, by: id), writer: id, stamp: stamp)
          mask.insert(.field(Int(w.field)))
        }
        r.stamp = stamp
        stampVersions(&r)
        record.kind = .create(type: type, values: values)
        store[key] = r
        outbox.save(key, fields: mask)
        if env.hasAssets { keepOwnFiles(values) }
        break
      }
      guard !store.contains(key) || (store.isDeleted(key) && env.context.isRecreated(key)) else {
        return ignore("\(key) already exists on this device", .create(type: type, values: values))
      }
      if env.context.isRecreated(key) {
        // Created again after a delete (whose tombstone may still be waiting to be sent here):
        // nothing of the deleted incarnation carries over.
        ancestors[key] = nil
        if !remerge.isEmpty { remerge.remove(key) }
        if !movedFrom.isEmpty { movedFrom[key] = nil }
        if env.hasReferences { knownDeletes[key] = nil }
      }
      let spec = schema.types[Int(type)]
      var fields = spec.fields.map { FieldValue(value: $0.initialValue, writer: 0, stamp: .origin) }
      for w in values { fields[Int(w.field)] = FieldValue(value: _stamped(w.value, by: id), writer: id, stamp: stamp) }
      var new = RecordState(key: key, type: type, creator: id, creatorDevice: config.index, fields: fields, stamp: stamp)
      stampVersions(&new)
      record.kind = .create(type: type, values: values)
      setLocal(new, for: key, effects: &effects)
      if env.hasAssets { keepOwnFiles(values) }
      if spec.uniqueness != nil && env.settings.unique == .keyName {
        // The name comes from the key, so another device may have made the record too: only
        // what this create wrote is its change (a default must not overwrite their values).
        var mask: FieldMask = []
        for w in values { mask.insert(.field(Int(w.field))) }
        outbox.save(key, fields: mask)
      } else {
        outbox.save(key, fields: .first(spec.fields.count))
      }
    case .set(_, let values):
      guard var r = live else { return ignore(_absence(key), .set(values)) }
      var mask: FieldMask = []
      for w in values {
        var value = _stamped(w.value, by: id)
        if case .text(let old) = r.fields[Int(w.field)].value, case .text(let replacement) = w.value {
          // Setting a text field replaces all of it: the old characters become tombstones, so
          // that a concurrent edit merges against them instead of duplicating them.
          var t = old
          t.removeAll(by: id)
          t.append(replacement.string, by: id)
          value = .text(t)
        }
        if env.hasReferences, r.changeTag != 0, case .ref(let parent) = r.fields[Int(w.field)].value, value != .ref(parent) {
          // Moved away from a parent the server may still show it in, until this save is in.
          if movedFrom[key]?.contains(parent) != true { movedFrom[key, default: []].append(parent) }
        }
        r.fields[Int(w.field)] = FieldValue(value: value, writer: id, stamp: stamp)
        mask.insert(.field(Int(w.field)))
      }
      r.stamp = stamp
      stampVersions(&r)
      record.kind = .set(values)
      store[key] = r
      outbox.save(key, fields: mask)
      if env.hasAssets { keepOwnFiles(values) }
    case .append(_, let field, let text):
      guard var r = live else { return ignore(_absence(key), .append(field: field, text: text)) }
      var t = r.fields[Int(field)].value.textValue ?? TextValue()
      t.append(text, by: id)
      r.fields[Int(field)] = FieldValue(value: .text(t), writer: id, stamp: stamp)
      r.stamp = stamp
      stampVersions(&r)
      record.kind = .append(field: field, text: text)
      store[key] = r
      outbox.save(key, fields: .field(Int(field)))
    case .replace(_, let field, let old, let new):
      guard var r = live else { return ignore(_absence(key), .replace(field: field, old: old, new: new, removed: [])) }
      var t = r.fields[Int(field)].value.textValue ?? TextValue()
      guard let removed = t.replaceReturningRemoved(old, with: new, by: id) else {
        return ignore("the text \"\(old)\" is not in it on this device", .replace(field: field, old: old, new: new, removed: []))
      }
      r.fields[Int(field)] = FieldValue(value: .text(t), writer: id, stamp: stamp)
      r.stamp = stamp
      stampVersions(&r)
      record.kind = .replace(field: field, old: old, new: new, removed: removed)
      store[key] = r
      outbox.save(key, fields: .field(Int(field)))
    case .delete:
      guard var r = live else { return ignore(_absence(key), .delete) }
      if denyingReferrer(of: r, rules: env.context.rules) != nil {
        return ignore("a record on this device refers to it through a reference whose delete rule is deny", .delete)
      }
      r.deletedBy = id
      r.deleteStamp = stamp
      // The tombstone carries the writes of the record the deleting copy had incorporated, not
      // the delete's own stamp: a delete is no write that a later delete must have seen.
      record.kind = .delete
      if env.hasReferences { knownDeletes[key] = id }
      setLocal(r, for: key, effects: &effects)
      outbox.delete(key)
    }
    if env.hasVersions, env.settings.unknownFields == .drop, Int(appVersion) < env.context.rules.latestVersion, record.kind != .delete,
      var r = store[key],
      !r.isDeleted
    {
      // A whole-record save of the decoded model: the fields this version does not know go out
      // empty, and overwrite what a newer version wrote there.
      var erased: FieldMask = []
      var fields: [Int32] = []
      for f in r.fields.indices where !env.context.rules.knows(version: Int(appVersion), type: r.type, field: f) {
        r.fields[f] = FieldValue(value: schema.types[Int(r.type)].fields[f].initialValue, writer: 0, stamp: stamp)
        erased.insert(.field(f))
        fields.append(Int32(f))
      }
      if !fields.isEmpty {
        store[key] = r
        outbox.save(key, fields: erased)
        effects.append(.fact(.erasedUnknownFields(key, fields: fields, version: appVersion)))
      }
    }
    if madeInShare, record.ignored == nil { sharedKeys.insert(key) }
    if let debounce = config.autosync {
      effects.append(.timer(.autosync, after: debounce, generation: _bump(.autosync)))
    }
    return record
  }

  /// A live record here whose `on-delete deny` reference points at `record`, or nil.
  func denyingReferrer(of record: RecordState, rules: SchemaRules) -> RecordKey? {
    guard rules.hasReferences else { return nil }
    let deny = rules.referrers[Int(record.type)].filter { $0.rule == .deny }
    guard !deny.isEmpty else { return nil }
    for (key, r) in store where !r.isDeleted {
      for d in deny where d.type == r.type && r.fields[Int(d.field)].value == .ref(record.key) { return key }
    }
    return nil
  }

  func _absence(_ key: RecordKey) -> String {
    !store.contains(key) ? "the record is not on this device" : "the record is deleted on this device"
  }

  /// Text literals become text whose characters carry the writing intent.
  func _stamped(_ value: Value, by id: IntentID) -> Value {
    if case .text(let t) = value { return .text(TextValue(t.string, by: id)) }
    return value
  }
}

extension Value {
  package var textValue: TextValue? {
    if case .text(let t) = self { return t }
    return nil
  }
}
