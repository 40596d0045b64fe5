import Foundation

/// A zone-wide share, as the app's shared-database engine hands it over (`CKShare`, a record
/// subclass, <https://developer.apple.com/documentation/cloudkit/ckshare>): who owns the zone,
/// who takes part with which permission, and what the current user may do.
///
/// It comes as a record of the shared zone in `fetchedRecordZoneChanges` — first in the event,
/// when the engine first sees the zone and whenever the share changes (a participant added or
/// removed, a permission changed) — named ``zoneWideShareRecordName`` and of type
/// ``recordType``, as CloudKit delivers a zone's `CKShare`. An app tells it apart as it tells a
/// `CKShare` apart, and reads the current user's permission to stop the user editing a
/// read-only share:
///
///     for modification in changes.modifications {
///       if let share = modification.record as? SyncShare {
///         shares[share.recordID.zoneID] = share
///         continue
///       }
///       …
///     }
///     let canEdit = shares[zoneID]?.currentUserParticipant?.permission != .readOnly
///
/// What is not modelled: the app does not make, save or delete a share (a scenario's `share`,
/// `invite`, `permission`, `remove`, `unshare` lines are the user in the system's sharing UI);
/// share URLs and `CKShare.Metadata`, public permission, and hierarchy shares (`rootRecord`).
public final class SyncShare: SyncRecord, @unchecked Sendable {
  /// The record name of a zone-wide share (`CKRecordNameZoneWideShare`).
  public static let zoneWideShareRecordName = "cloudkit.zoneshare"
  /// The record type of a share (`CKRecord.SystemType.share`).
  public static let recordType = "cloudkit.share"

  /// A participant's permission (`CKShare.ParticipantPermission`).
  public enum ParticipantPermission: String, Hashable, Sendable {
    /// May read the share's records, not change them: a save is refused with
    /// `permissionFailure`.
    case readOnly
    /// May read and change them.
    case readWrite
  }

  /// A participant's role (`CKShare.ParticipantRole`).
  public enum ParticipantRole: String, Hashable, Sendable {
    /// The user who shares the zone.
    case owner
    /// A user invited to it.
    case privateUser
  }

  /// Where a participant is with the invitation (`CKShare.ParticipantAcceptanceStatus`). Only
  /// accepted participants see the records ("The records remain accessible for as long as the
  /// participant's status is accepted", Apple, `CKShare.Participant`).
  public enum ParticipantAcceptanceStatus: String, Hashable, Sendable {
    /// Invited, not accepted yet.
    case pending
    /// Accepted.
    case accepted
  }

  /// One user's part in the share (`CKShare.Participant`); users are named by their user record
  /// name (the scenario's account name), where CloudKit gives a `CKUserIdentity`.
  public struct Participant: Hashable, Sendable, CustomStringConvertible {
    /// The user (`userIdentity.userRecordID?.recordName`).
    public var userName: String
    /// Owner or invited user.
    public var role: ParticipantRole
    /// What the user may do with the records.
    public var permission: ParticipantPermission
    /// Whether the user accepted.
    public var acceptanceStatus: ParticipantAcceptanceStatus

    /// A participant.
    public init(userName: String, role: ParticipantRole, permission: ParticipantPermission, acceptanceStatus: ParticipantAcceptanceStatus) {
      self.userName = userName
      self.role = role
      self.permission = permission
      self.acceptanceStatus = acceptanceStatus
    }

    /// `bob read-only accepted`.
    public var description: String {
      "\(userName) \(permission == .readOnly ? "read-only" : "read-write")\(role == .owner ? " owner" : "") \(acceptanceStatus.rawValue)"
    }
  }

  /// The owner of the zone.
  public let owner: Participant
  /// Every participant: the owner first, then the invited users in the order invited.
  public let participants: [Participant]
  /// The signed-in user's own part (`currentUserParticipant`).
  public let currentUserParticipant: Participant?

  /// The share of `zoneID`, as the signed-in user `currentUser` sees it.
  public init(zoneID: SyncRecordZoneID, owner: Participant, participants: [Participant], currentUser: String) {
    self.owner = owner
    self.participants = participants
    currentUserParticipant = participants.first { $0.userName == currentUser }
    super.init(recordType: Self.recordType, recordID: SyncRecordID(recordName: Self.zoneWideShareRecordName, zoneID: zoneID))
  }

  /// A copy: the same share.
  public override func copy() -> SyncRecord {
    let share = SyncShare(
      zoneID: recordID.zoneID, owner: owner, participants: participants, currentUser: currentUserParticipant?.userName ?? "")
    share.system = system
    share.fields = fields
    return share
  }

  /// `share of Trips@alice: alice read-write owner accepted, bob read-only accepted`.
  public override var description: String {
    "share of \(recordID.zoneID): " + participants.map(\.description).joined(separator: ", ")
  }
}
