@_spi(Kernel) import Simulator

/// A named policy: what it models and what it is known to lose (`policies.md`).
public struct PolicyPreset: Sendable {
  /// The preset's name, as specs and `sim-cli policies` write it (`cloudkit-default`).
  public var name: String
  /// The stack or design the preset models, in a phrase.
  public var models: String
  /// What the oracle is known to find under the preset, in a phrase.
  public var knownToLose: String
  /// A planted bug: a preset that exists so that the oracle is tested on it.
  public var plantedBug: Bool
  /// The preset's axes.
  public var settings: PolicySettings
}

extension PolicyPreset {
  /// Every preset, in the order `sim-cli policies` lists them.
  public static let all: [PolicyPreset] = [
    preset(
      "cloudkit-default",
      models: "NSPersistentCloudKitContainer as observed: whole-record LWW by arrival, all keys, tombstones kept 30d, naive refetch",
      loses: "concurrent edits to one record (even to different fields); zombies after a long offline period"
    ) {
      $0.granularity = .record
      $0.winner = .arrival
      $0.save = .allKeys
      $0.delete = .tombstone
      $0.retention = .days(30)
      $0.refetch = .naive
      $0.text = .whole
      $0.unique = .ignore
    },
    preset(
      "record-lww-clock",
      models: "a REST/updated_at table (Supabase-style): whole-record LWW by device clock, hard deletes",
      loses: "stale overwrites under clock skew; resurrections from lagging devices"
    ) {
      $0.granularity = .record
      $0.winner = .clock
      $0.save = .allKeys
      $0.delete = .hard
      $0.refetch = .naive
    },
    preset(
      "field-lww-arrival",
      models: "per-field server order (PowerSync default, CloudKit changed-keys)",
      loses: "concurrent edits to one text field; causally later write lost under reordered delivery"
    ) {
      $0.granularity = .field
      $0.winner = .arrival
      $0.save = .changedKeys
    },
    preset(
      "field-lww-clock",
      models: "per-field device timestamps (SQLite-to-CloudKit libraries)",
      loses: "stale overwrites under clock skew"
    ) {
      $0.granularity = .field
      $0.winner = .clock
      $0.save = .changedKeys
    },
    preset(
      "field-lww-hlc",
      models: "per-field hybrid logical clocks, tombstones, diff refetch",
      loses: "concurrent edits to one non-mutable field (text whole)"
    ) {
      $0.granularity = .field
      $0.winner = .hlc
      $0.save = .changedKeys
      $0.delete = .tombstone
      $0.refetch = .diff
    },
    preset(
      "sync-engine-merge",
      models: "CKSyncEngine style: if-unchanged saves, conflicts merged field-wise by HLC and re-saved",
      loses: "text edits when text=whole"
    ) {
      $0.granularity = .field
      $0.winner = .hlc
      $0.save = .ifUnchanged
      $0.delete = .tombstone
      $0.refetch = .diff
    },
    preset(
      "crdt",
      models: "per-field HLC, sequence-CRDT text, tombstones, diff refetch, a concurrent update beats a delete",
      loses: "nothing the oracle counts (the cost shows in messages and bytes)"
    ) {
      $0.granularity = .field
      $0.winner = .hlc
      $0.text = .merge
      $0.delete = .tombstone
      $0.refetch = .diff
      $0.conflict = .updateWins
    },
    preset(
      "append-only",
      models: "the essay's design: field-lww-hlc with tombstones, for schemas whose concurrent work is inserts",
      loses: "nothing, when the schema is shaped for it"
    ) {
      $0.granularity = .field
      $0.winner = .hlc
      $0.save = .changedKeys
      $0.delete = .tombstone
      $0.refetch = .diff
    },
    // Planted bugs: each must be caught by the oracle on its scenario.
    preset(
      "hard-delete", models: "planted bug: field-lww-hlc delete=hard",
      loses: "resurrections when a save is retried after its answer was lost", planted: true
    ) {
      $0.granularity = .field
      $0.winner = .hlc
      $0.delete = .hard
    },
    preset(
      "mark-first-unit", models: "planted bug: field-lww-hlc unit=mark-first",
      loses: "a batch whose request is cut off by a kill or an expired background budget", planted: true
    ) {
      $0.unit = .markFirst
    },
    preset(
      "memory-outbox", models: "planted bug: field-lww-hlc outbox=memory",
      loses: "pending changes when the app is killed", planted: true
    ) {
      $0.outbox = .memory
    },
    preset(
      "token-before-apply", models: "planted bug: field-lww-hlc token=before-apply",
      loses: "fetched changes when the app is killed between saving the token and applying them", planted: true
    ) {
      $0.token = .beforeApply
    },
    preset(
      "naive-refetch", models: "planted bug: field-lww-hlc refetch=naive retention=7d",
      loses: "zombie rows on a device offline longer than the retention", planted: true
    ) {
      $0.refetch = .naive
      $0.retention = .days(7)
    },
    preset(
      "drops-transient", models: "planted bug: field-lww-hlc retry=never",
      loses: "changes the engine gives up on after a transient CloudKit error (zoneBusy, quotaExceeded, …) while the app shows them synced",
      planted: true
    ) {
      $0.retry = .never
    },
    preset(
      "ignores-retry-after", models: "planted bug: field-lww-hlc retry-after=ignore",
      loses: "liveness: under throttling, early retries are refused and lengthen the wait, so sync stalls", planted: true
    ) {
      $0.retryAfter = .ignore
    },
    preset(
      "no-split", models: "planted bug: field-lww-hlc split=off",
      loses: "liveness: a batch over CloudKit's limits is sent again unchanged and fails forever", planted: true
    ) {
      $0.split = .off
    },
    preset(
      "reuploads-after-purge", models: "planted bug: field-lww-hlc zone-deleted=reupload",
      loses: "data the user purged in Settings comes back: a device uploads its copies again (resurrections)", planted: true
    ) {
      $0.zoneDeleted = .reupload
    },
    preset(
      "wipes-after-reset", models: "planted bug: field-lww-hlc zone-deleted=wipe",
      loses: "after an encrypted-data reset every device deletes its copies, so the data is gone everywhere", planted: true
    ) {
      $0.zoneDeleted = .wipe
    },
    preset(
      "wipes-on-signout", models: "planted bug: field-lww-hlc account=wipe",
      loses: "edits not yet sent when the iCloud account signs out or switches (Apple's sample deletes local data)", planted: true
    ) {
      $0.account = .wipe
    },
    preset(
      "random-record-names", models: "planted bug: field-lww-hlc unique=ignore",
      loses: "uniqueness: a settings singleton or a per-key record created on two devices before they sync stays two records",
      planted: true
    ) {
      $0.unique = .ignore
    },
    preset(
      "dedupes-after-fetch", models: "planted bug: field-lww-hlc unique=dedupe",
      loses:
        "uniqueness repaired after the fact: a device deletes a fetched duplicate with what was written to it, and two devices doing it at once delete both",
      planted: true
    ) {
      $0.unique = .dedupe
    },
    preset(
      "local-delete-rules", models: "planted bug: field-lww-hlc references=local-only",
      loses: "references: a child made or kept on another device while its parent was deleted is left referring to nothing",
      planted: true
    ) {
      $0.references = .localOnly
    },
    preset(
      "deletions-first", models: "planted bug: field-lww-hlc references=eager",
      loses: "references: a fetched parent delete cascades before the batch's other changes apply, deleting a child already moved elsewhere",
      planted: true
    ) {
      $0.references = .eager
    },
    preset(
      "drops-orphans", models: "planted bug: field-lww-hlc orphans=drop order=as-queued",
      loses: "a child sent before its parent (as queued) and fetched before it is discarded, so the device never shows that version",
      planted: true
    ) {
      $0.orphans = .drop
      $0.order = .asQueued
    },
    preset(
      "drops-unknown-fields", models: "planted bug: field-lww-hlc unknown-fields=drop",
      loses: "app versions: an old build erases fields added by a newer one when it saves, and never backfills them after upgrading",
      planted: true
    ) {
      $0.unknownFields = .drop
    },
    preset(
      "keeps-revoked-shares", models: "planted bug: field-lww-hlc access-ended=keep",
      loses: "sharing: a participant removed from a share, or whose owner stopped sharing, keeps showing its records",
      planted: true
    ) {
      $0.accessEnded = .keep
    },
    preset(
      "ignores-permission-failure", models: "planted bug: field-lww-hlc permission-failure=ignore",
      loses: "sharing: a read-only participant's edit, refused by the server, stays shown as saved",
      planted: true
    ) {
      $0.permissionFailure = .ignore
    },
    preset(
      "blocks-read-only-updates", models: "planted bug: field-lww-hlc fetched-read-only=block",
      loses: "sharing: the app's permission checks also stop the engine, so a read-only participant never sees the owner's edits (sqlite-data #129)",
      planted: true
    ) {
      $0.fetchedReadOnly = .block
    },
    preset(
      "echoes-shared-changes", models: "planted bug: field-lww-arrival fetched-shared=echo",
      loses: "sharing: a participant uploads the owner's changes again as its own, and an old version overwrites a newer one (SyncKit #164)",
      planted: true
    ) {
      $0.winner = .arrival
      $0.fetchedShared = .echo
    },
    preset(
      "skips-own-records", models: "planted bug: field-lww-hlc own-fetched=skip",
      loses: "sharing: fetched records the device wrote are skipped, so after a share is accepted again they never come back (SyncKit #128)",
      planted: true
    ) {
      $0.ownFetched = .skip
    },
    preset(
      "fetches-shares-at-launch", models: "planted bug: field-lww-hlc shared-fetch=at-launch",
      loses:
        "sharing: the shared database is fetched only when the app launches, so an accepted share shows nothing until a relaunch (apple/sample-cloudkit-sync-engine #17)",
      planted: true
    ) {
      $0.sharedFetch = .atLaunch
    },
    preset(
      "shares-stale-root", models: "planted bug: field-lww-hlc share-root=as-known",
      loses:
        "sharing: a record hierarchy is shared with its root as last fetched; saving a child moved the root's change tag, which no fetch reports, so the share is refused for good (sqlite-data #363)",
      planted: true
    ) {
      $0.shareRoot = .asKnown
    },
    preset(
      "deletes-file-early", models: "planted bug: field-lww-hlc asset-file=delete-after-send",
      loses:
        "assets: the upload's file is deleted when an answer comes back that does not confirm the save, so the retry fails with assetFileNotFound and the photo never reaches the server (SyncKit #120)",
      planted: true
    ) {
      $0.assetFile = .deleteAfterSend
    },
    preset(
      "keeps-staging-url", models: "planted bug: field-lww-hlc fetched-assets=keep-staging",
      loses: "assets: a fetched photo is shown from the staging area, which the system purges, and the record shows no photo (Apple, CKAsset)",
      planted: true
    ) {
      $0.fetchedAssets = .keepStaging
    },
    preset(
      "merges-server-assets", models: "planted bug: sync-engine-merge asset-merge=all-fields",
      loses:
        "assets: after serverRecordChanged every field of the server's record is copied and saved, and its assets have no data (Apple, CKAsset.fileURL): the photo is replaced by nothing",
      planted: true
    ) {
      $0.save = .ifUnchanged
      $0.assetMerge = .allFields
    },
  ]

  /// The preset called `name`, or nil when there is none.
  public static func named(_ name: String) -> PolicyPreset? { all.first { $0.name == name } }

  static func preset(_ name: String, models: String, loses: String, planted: Bool = false, _ configure: (inout PolicySettings) -> Void)
    -> PolicyPreset
  {
    var s = PolicySettings()
    configure(&s)
    return PolicyPreset(name: name, models: models, knownToLose: loses, plantedBug: planted, settings: s)
  }
}
