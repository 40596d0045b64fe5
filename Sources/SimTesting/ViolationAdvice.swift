/// What usually causes each kind of violation, as policy axes, and what to do about it: the
/// "likely cause" part of a failure message.
enum ViolationAdvice {
  /// One usual cause: an axis value (checked against the policy's settings when they are
  /// known), or a mechanism no axis names.
  struct Cause {
    var axis: String?
    var present: ((PolicySettings) -> Bool)?
    var why: String
  }

  /// What to change: axis values that prevent the kind (the fix a preset spec can take), what
  /// they do, and what no axis covers.
  struct Entry {
    var causes: [Cause]
    var remedy: [(key: String, value: String)] = []
    var does: String = ""
    var otherwise: String?
  }

  /// The advice for every violation kind in `kinds` (report order), for a policy with
  /// `settings` (nil when unknown).
  static func render(_ kinds: [AnomalyKind], settings: PolicySettings?, isCustom: Bool) -> String {
    _render(kinds, settings: settings, isCustom: isCustom)
  }

  /// The `fix:` lines of one kind. With the policy's settings known, only axis values it does not
  /// have yet, and a spec that has them — never the policy already in use.
  static func fix(_ entry: Entry, settings: PolicySettings?, isCustom: Bool) -> String {
    var out = ""
    if let settings {
      var changed = settings
      // An axis value to change — unless the entry names causes on that axis and none of them
      // is this policy's (unique=key-name fixes the lost edits of unique=dedupe, not others).
      let missing = entry.remedy.filter { pair in
        var probe = settings
        _ = probe._set(pair.key, pair.value)
        let onAxis = entry.causes.filter { $0.axis?.hasPrefix(pair.key + "=") == true }
        return probe != settings && (onAxis.isEmpty || onAxis.contains { $0.present?(settings) == true })
      }
      for pair in missing { _ = changed._set(pair.key, pair.value) }
      if !missing.isEmpty {
        let spec = isCustom ? "" : "; as a spec: \(shellQuote(PolicySpec.closest(to: changed).description))"
        out += "    fix: \(missing.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) — \(entry.does)\(spec)\n"
      } else if !entry.remedy.isEmpty {
        out +=
          "    fix: the axes that usually prevent it are already set (\(entry.remedy.map { "\($0.key)=\($0.value)" }.joined(separator: " "))): the explanation above says what happened instead\n"
      }
    } else if !entry.remedy.isEmpty {
      out += "    fix: \(entry.remedy.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) — \(entry.does)\n"
    }
    if let otherwise = entry.otherwise { out += "    \(out.isEmpty ? "fix" : "also"): \(otherwise)\n" }
    return out
  }

  static func _render(_ kinds: [AnomalyKind], settings: PolicySettings?, isCustom: Bool) -> String {
    var out = "what to do:\n"
    for kind in kinds {
      let entry = self.entry(kind)
      let axisCauses = entry.causes.filter { $0.axis != nil }
      let otherCauses = entry.causes.filter { $0.axis == nil }
      let present = settings.map { s in axisCauses.filter { $0.present?(s) == true } } ?? []
      let shown: [Cause]
      if !present.isEmpty {
        let own =
          isCustom ? "; it is your own policy, so also look at its merge decisions (serverSave, serverDelete, deviceApply, resolveConflict)" : ""
        out += "  \(kind.rawValue) — this policy has \(_list(present.compactMap(\.axis)))\(own):\n"
        shown = present + otherCauses
      } else if isCustom {
        out +=
          "  \(kind.rawValue) — none of the usual axes is set in this policy's settings, so look at its merge decisions (serverSave, serverDelete, deviceApply, resolveConflict); the usual causes are:\n"
        shown = entry.causes
      } else if settings != nil && !axisCauses.isEmpty {
        out += "  \(kind.rawValue) — this policy sets none of the usual axes; look at the explanation above. Usually caused by:\n"
        shown = entry.causes
      } else {
        out += "  \(kind.rawValue) — usually caused by:\n"
        shown = entry.causes
      }
      for cause in shown {
        out += "    • \(cause.axis.map { "\($0): " } ?? "")\(cause.why)\n"
      }
      out += fix(entry, settings: settings, isCustom: isCustom)
    }
    return out
  }

  static func _list(_ items: [String]) -> String {
    switch items.count {
    case 0: return ""
    case 1: return items[0]
    default: return items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1]
    }
  }

  static func entry(_ kind: AnomalyKind) -> Entry {
    switch kind {
    case .lostEdit:
      return Entry(
        causes: [
          Cause(
            axis: "granularity=record", present: { $0.granularity == .record },
            why: "a save of the whole record carries the other device's old values along, even for fields it did not touch"),
          Cause(
            axis: "save=all-keys", present: { $0.save == .allKeys },
            why: "every save overwrites every field, including ones this device did not change"),
          Cause(
            axis: "text=whole", present: { $0.text == .whole }, why: "of two concurrent edits to one text field, only the winner's version survives"),
          Cause(
            axis: "retry=never", present: { $0.retry == .never },
            why: "the engine gives up on a change after a transient CloudKit error (zoneBusy, quotaExceeded, …) and the app shows it synced"),
          Cause(
            axis: "unknown-fields=drop", present: { $0.unknownFields == .drop },
            why: "an older app version saves the whole record it decoded, erasing fields a newer version wrote"),
          Cause(
            axis: "unique=dedupe", present: { $0.unique == .dedupe },
            why: "the engine deletes a fetched duplicate of a unique record, with what was written to it (both, when two devices do it at once)"),
        ],
        remedy: [
          ("granularity", "field"), ("save", "changed-keys"), ("text", "merge"), ("retry", "transient"), ("unknown-fields", "keep"),
          ("unique", "key-name"),
        ],
        does: "merge per field, saving only the changed keys, and merge concurrent text edits",
        otherwise: "shape the schema so that concurrent work is inserts of an append-only type, and mark only truly mutable fields `mutable`.")
    case .staleOverwrite:
      return Entry(
        causes: [
          Cause(
            axis: "winner=clock", present: { $0.winner == .clock }, why: "a device whose clock runs behind writes values that lose to older ones"),
          Cause(
            axis: "winner=arrival", present: { $0.winner == .arrival },
            why: "a write delivered late (a retry, a reordered message) replaces a newer one"),
        ], remedy: [("winner", "hlc")], does: "order writes by hybrid logical clocks, which respect what each device had seen")
    case .resurrection:
      return Entry(
        causes: [
          Cause(
            axis: "delete=hard", present: { $0.delete == .hard }, why: "the server forgets the delete, so a retried or late save recreates the record"
          ),
          Cause(
            axis: "refetch=naive", present: { $0.refetch == .naive },
            why: "after an expired change token, local rows missing from the refetch are kept (zombies)"),
          Cause(axis: nil, present: nil, why: "a retention shorter than the longest time a device stays offline expires its token"),
        ],
        remedy: [("delete", "tombstone"), ("refetch", "diff")], does: "keep tombstones, and compare a refetch with the local rows",
        otherwise: "keep tombstones longer than any device stays offline (retention=…).")
    case .droppedEvent:
      return Entry(
        causes: [
          Cause(
            axis: "unit=mark-first", present: { $0.unit == .markFirst },
            why: "a batch cut off by a kill or an expired background budget is cleared from the outbox anyway"),
          Cause(axis: "outbox=memory", present: { $0.outbox == .memory }, why: "pending changes die with the app"),
          Cause(
            axis: "token=before-apply", present: { $0.token == .beforeApply },
            why: "a kill between saving the change token and applying the fetched changes skips them"),
          Cause(
            axis: "orphans=drop", present: { $0.orphans == .drop },
            why: "an event fetched before the record it refers to was discarded, and never fetched again"),
        ], remedy: [("outbox", "durable"), ("unit", "resumable"), ("token", "after-apply"), ("orphans", "keep")],
        does: "a durable, resumable outbox, and the change token saved after the changes are applied")
    case .duplicateEvent:
      return Entry(
        causes: [
          Cause(axis: nil, present: nil, why: "a retried save or append applied twice: a merge decision that is not idempotent")
        ], otherwise: "make applying the same write twice a no-op (compare the incoming record's versions with the stored ones before appending).")
    case .strandedRecord:
      return Entry(
        causes: [
          Cause(
            axis: "unit=mark-first", present: { $0.unit == .markFirst },
            why: "a batch cut off mid-request is cleared from the outbox and never re-sent"),
          Cause(axis: "outbox=memory", present: { $0.outbox == .memory }, why: "changes pending when the app is killed are never sent"),
          Cause(
            axis: "retry=never", present: { $0.retry == .never },
            why: "the engine gives up on a new record after a transient CloudKit error, so it never reaches the server"),
          Cause(
            axis: nil, present: nil,
            why: "the schema: a record type that is not CloudKit-safe or not deployed is rejected by the server (`sim-cli check` reports it)"),
        ], remedy: [("outbox", "durable"), ("unit", "resumable"), ("retry", "transient")],
        does: "a durable, resumable outbox that retries transient errors",
        otherwise: "a CloudKit-safe, deployed schema (`sim-cli check` lints it).")
    case .divergence:
      return Entry(
        causes: [
          Cause(axis: "refetch=naive", present: { $0.refetch == .naive }, why: "zombie rows stay on one device after a refetch"),
          Cause(axis: "token=before-apply", present: { $0.token == .beforeApply }, why: "one device skipped changes the others applied"),
          Cause(
            axis: "orphans=drop", present: { $0.orphans == .drop },
            why: "a fetched record whose parent had not arrived yet was discarded, and the change token moved past it"),
          Cause(
            axis: "unknown-fields=drop", present: { $0.unknownFields == .drop },
            why: "an older app version discarded fields it did not know, and after upgrading never fetched them again"),
          Cause(
            axis: nil, present: nil,
            why:
              "devices fold a server record differently from how the server decided, or sync never reached quiescence (the explanation says which record and field differ first)"
          ),
        ], remedy: [("refetch", "diff"), ("token", "after-apply"), ("orphans", "keep"), ("unknown-fields", "keep")],
        does:
          "compare a refetch with the local rows, save the change token after applying, keep records whose parent is still to come, and keep fields an old version does not know",
        otherwise: "make deviceApply agree with serverSave, and let every conflict resolve to a state the server stores.")
    case .phantomValue:
      return Entry(
        causes: [
          Cause(axis: nil, present: nil, why: "a merge that makes up a value no write carried (e.g. a resolveConflict that combines two fields)")
        ], otherwise: "return only values that some write carried, with that write's provenance.")
    case .stalledSync:
      return Entry(
        causes: [
          Cause(
            axis: "retry-after=ignore", present: { $0.retryAfter == .ignore },
            why: "the engine retries before the server's retry-after ends, and each early retry is refused and makes the wait longer"),
          Cause(axis: "split=off", present: { $0.split == .off }, why: "an oversized batch is sent again unchanged and fails every time"),
          Cause(
            axis: "share-root=as-known", present: { $0.shareRoot == .asKnown },
            why:
              "a hierarchy share is saved with the root as last fetched; a child's save moved the root's change tag, which no fetch reports, so the share is refused every time (sqlite-data #363)"
          ),
          Cause(axis: nil, present: nil, why: "the user's iCloud storage is full (quotaExceeded): only the user can free space, so tell them"),
        ], remedy: [("retry-after", "honour"), ("split", "on"), ("share-root", "fetch-first")],
        does:
          "wait as long as the server's retry-after says, split batches over CloudKit's limits, and fetch a share's root record just before saving the share",
        otherwise: "tell the user when their iCloud storage is full, and keep the changes pending until it is freed.")
    case .danglingReference:
      return Entry(
        causes: [
          Cause(
            axis: "references=local-only", present: { $0.references == .localOnly },
            why: "delete rules run only on the device where the user deleted, so referring records elsewhere keep naming a deleted record"),
          Cause(
            axis: "references=eager", present: { $0.references == .eager },
            why:
              "a fetched delete's rules run before the rest of the fetched batch is applied, so a child moved elsewhere is cascaded from a stale copy"
          ),
        ], remedy: [("references", "propagate")],
        does:
          "run the delete rules on every device, once a fetched batch is applied, on fetched deletes and on fetched records that refer to a deleted one",
        otherwise: "make every reference optional and treat a missing target as absent in the app.")
    case .logicalDuplicate:
      return Entry(
        causes: [
          Cause(
            axis: "unique=ignore", present: { $0.unique == .ignore },
            why: "each device names its record at random, so two creates of one key are two records"),
          Cause(
            axis: "unique=dedupe", present: { $0.unique == .dedupe },
            why: "records are named at random and repaired after the fact, so a duplicate another device keeps editing can survive"),
        ], remedy: [("unique", "key-name")], does: "derive the record name from the unique key, so that both creates save one record",
        otherwise: "derive record names from the key in the app (a fixed name for a singleton).")
    case .accessLeak:
      return Entry(
        causes: [
          Cause(
            axis: "access-ended=keep", present: { $0.accessEnded == .keep },
            why: "the engine keeps its copies of a share's records when the account loses access (removed, left, the owner stopped sharing)"),
          Cause(
            axis: "account=merge", present: { $0.account == .merge },
            why: "the engine keeps local data, shared records included, for whichever account signs in next"),
        ], remedy: [("access-ended", "remove"), ("account", "keep")],
        does: "delete the local copies of a share's records when its zone leaves the shared database, and set an account's data aside with it",
        otherwise: "on a zone deletion in the shared database, delete every local row of that zone; never keep shared rows across an account change.")
    case .missingAsset:
      return Entry(
        causes: [
          Cause(
            axis: "fetched-assets=keep-staging", present: { $0.fetchedAssets == .keepStaging },
            why: "the engine shows a fetched asset from the staging area, which the system purges when it likes (Apple, CKAsset)"),
          Cause(
            axis: "asset-merge=all-fields", present: { $0.assetMerge == .allFields },
            why:
              "after serverRecordChanged the engine copies every field of the server's record, whose assets carry no data (CKAsset.fileURL is nil), and saves them"
          ),
        ], remedy: [("fetched-assets", "copy"), ("asset-merge", "changed-keys")],
        does: "copy a fetched asset's file into the app's own files at once, and after serverRecordChanged save only the keys it changed",
        otherwise:
          "copy each fetched CKAsset's file out of the staging area in the fetch's delegate call; after serverRecordChanged, never copy an asset from the error's server record (its fileURL is nil)."
      )
    case .concurrentOverwrite, .deleteUpdateConflict:
      return Entry(causes: [], otherwise: "nothing: this kind is informational.")
    }
  }
}
