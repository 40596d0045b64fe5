import Replica
@_spi(Kernel) import Simulator

/// Assets (`oracle.md`, Assets): what each device shows of them, judged from the final states.
extension Oracle {
  /// `missing-asset`: after settle, a device shows a record whose asset field refers to content
  /// that is not on that device — a staging file the system purged, a file the app deleted, or
  /// an asset saved without its data — one anomaly per device, record and field, naming why.
  mutating func judgeAssets() {
    let rules = world.context.rules
    guard rules.hasAssets else { return }
    for d in world.devices.indices {
      for r in world.visibleRecords(device: d) {
        for f in rules.assetFields[Int(r.type)] {
          guard case .content(let c) = r.fields[Int(f)].value, c.isAsset else { continue }
          let file = world.file(of: c, device: d)
          guard !file.held else { continue }
          let device = deviceName(Int32(d))
          let field = fieldName(r.type, f)
          let why: String
          if !c.hasData {
            why =
              "the asset was saved without its data: after serverRecordChanged, whose server record carries no asset data (CKAsset.fileURL is nil), "
              + (judgesAnApp
                ? "the app's code copied that record's asset into what it saved"
                : "the engine copied every field of that record into what it saved (asset-merge=all-fields)")
          } else if let lost = file.lost {
            switch lost.why {
            case .stagingPurged:
              why =
                "its file was in the staging area, which the system purged at \(lost.at); "
                + (judgesAnApp
                  ? "the app's code kept the staging file instead of copying it"
                  : "the engine kept the staging file instead of copying it into the app's files (fetched-assets=keep-staging)")
            case .deletedByApp:
              why = "the app deleted its file at \(lost.at) while the record still refers to it"
            }
          } else {
            why = "its file never reached \(device)"
          }
          anomalies.append(
            Anomaly(
              kind: .missingAsset, record: recordRef(r.key), field: FieldRef(index: Int(f), name: field), devices: [deviceRef(Int32(d))],
              at: file.lost?.at,
              explanation:
                "after settle \(device) shows \(name(r.key)).\(field) = \(render(r.fields[Int(f)].value)), whose file is not on \(device): \(why)."
            ))
        }
      }
    }
  }

  /// `1.2 MB`, `850 KB`, `3 MB`: a size to read, in decimal units, to a tenth.
  static func readable(_ bytes: Int64) -> String {
    for (unit, size) in [("GB", Int64(1_000_000_000)), ("MB", 1_000_000), ("KB", 1_000)] where bytes >= size {
      let tenths = (bytes * 10 + size / 2) / size
      return tenths % 10 == 0 ? "\(tenths / 10) \(unit)" : "\(tenths / 10).\(tenths % 10) \(unit)"
    }
    return "\(bytes) bytes"
  }

  /// Why a device gave up on an upload, in words (``gaveUpCause(_:told:at:)``), naming the size and
  /// the limit of a record over CloudKit's per-record limits, and the missing file of an asset.
  func gaveUpCause(_ error: CloudKitError, told: Bool, at time: VirtualTime, key: RecordKey, device: Int32) -> String {
    let record = world.devices.withUnsafeBufferPointer { $0[Int(device)].store[key] }
    if error == .limitExceeded, let r = record, !r.isDeleted {
      let inline = r.inlineByteSize
      if inline > ServerState.maxRecordBytes {
        return
          "\(name(key)) is \(Self.readable(inline)) without its assets, and CloudKit saves at most \(Self.readable(ServerState.maxRecordBytes)) a record: its device's save failed with limitExceeded at \(time), which no retry or split can fix"
          + (told ? ", and it told the user" : ", and nobody was told")
      }
      if r.largestAsset > ServerState.maxAssetBytes {
        return
          "an asset of \(name(key)) is \(Self.readable(r.largestAsset)), and CloudKit takes at most \(Self.readable(ServerState.maxAssetBytes)) an asset: its device's save failed with limitExceeded at \(time)"
          + (told ? ", and it told the user" : ", and nobody was told")
      }
    }
    if error == .assetFileNotFound {
      let early = !judgesAnApp && world.config.policy.settings.assetFile == .deleteAfterSend
      return
        "its asset's file was not there when the upload read it (assetFileNotFound at \(time))"
        + (early
          ? ": the engine had deleted the upload's file when an earlier request for it ended unconfirmed (asset-file=delete-after-send)"
          : "")
        + (told ? "; its device gave up and told the user" : "; its device gave up and nobody was told")
    }
    return Self.gaveUpCause(error, told: told, at: time)
  }
}
