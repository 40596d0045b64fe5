@_spi(Kernel) import Simulator

extension DeviceState {
  /// Applies a user intent to the local store, queues it in the outbox, and returns it as the
  /// oracle will see it — without its ordinal and causal context, which the world's
  /// ``CausalLedger`` fills in. An intent that cannot apply — the record is not on this device,
  /// the text to replace is not there — is returned with `ignored` set and changes nothing.
  package mutating func perform(_ intent: UserIntent, id: IntentID, in env: DeviceEnvironment, effects: inout [DeviceEffect]) -> Intent {
    let now = env.now
    let schema = env.context.schema
    foreground()
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
    if config.causalMetadata { causal.note(stamp) }
    /// Every write carries what its device had seen (only with `causalMetadata`: no other policy
    /// reads versions, and keeping them costs an array per record copy).
    func stampVersions(_ r: inout RecordState) {
      guard config.causalMetadata else { return }
      r.versions.note(stamp)
      r.versions.formUnion(causal)
    }

    switch intent {
    case .create(let type, _, let values):
      guard !store.contains(key) else {
        return ignore("\(key) already exists on this device", .create(type: type, values: values))
      }
      let spec = schema.types[Int(type)]
      var fields = spec.fields.map { FieldValue(value: $0.initialValue, writer: 0, stamp: .origin) }
      for w in values { fields[Int(w.field)] = FieldValue(value: _stamped(w.value, by: id), writer: id, stamp: stamp) }
      var new = RecordState(key: key, type: type, creator: id, creatorDevice: config.index, fields: fields, stamp: stamp)
      stampVersions(&new)
      record.kind = .create(type: type, values: values)
      setLocal(new, for: key, effects: &effects)
      outbox.save(key, fields: .first(spec.fields.count))
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
        r.fields[Int(w.field)] = FieldValue(value: value, writer: id, stamp: stamp)
        mask.insert(.field(Int(w.field)))
      }
      r.stamp = stamp
      stampVersions(&r)
      record.kind = .set(values)
      store[key] = r
      outbox.save(key, fields: mask)
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
      r.deletedBy = id
      r.deleteStamp = stamp
      stampVersions(&r)
      record.kind = .delete
      setLocal(r, for: key, effects: &effects)
      outbox.delete(key)
    }
    if let debounce = config.autosync {
      effects.append(.timer(.autosync, after: debounce, generation: _bump(.autosync)))
    }
    return record
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
