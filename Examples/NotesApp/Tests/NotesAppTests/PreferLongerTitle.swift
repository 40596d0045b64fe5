import SimTesting

/// Our policy: per-field hybrid-logical-clock LWW, except that of two concurrent titles the
/// longer one is kept. A title written after seeing another still replaces it.
struct PreferLongerTitle: SyncPolicy {
  var base: StandardPolicy = "append-only text=merge"
  var name: String { "prefer-longer-title" }
  var settings: PolicySettings { base.settings }
  var tracksVersions: Bool { true }  // isConcurrent reads the records' version vectors

  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    let decision = base.serverSave(write, current: current, context: context)
    guard case .store(var stored) = decision, let current, !current.isDeleted,
      let title = context.field("title", of: current), write.changed.contains(field: title),
      write.record.isConcurrent(with: current, in: title),
      case .string(let mine) = write.record.fields[title].value, case .string(let theirs) = current.fields[title].value
    else { return decision }
    // Longer first, then alphabetical: the same choice in any arrival order, so devices converge.
    stored.fields[title] = (mine.count, mine) > (theirs.count, theirs) ? write.record.fields[title] : current.fields[title]
    return .store(stored)
  }

  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }
}
