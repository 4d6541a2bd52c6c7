import Delivery

/// The channels a request goes through, one message each, in order (Vonage's workflows).
/// The next one fires after `next_event_wait_s`, or at once on `verification.next`.
public enum Workflow: String, Sendable, CaseIterable {
    case sms
    case voice
    case smsVoice = "sms_voice"
    case smsVoiceVoice = "sms_voice_voice"
    case smsSMSVoice = "sms_sms_voice"
    case email

    public var steps: [DeliveryChannel] {
        switch self {
        case .sms: [.sms]
        case .voice: [.voice]
        case .smsVoice: [.sms, .voice]
        case .smsVoiceVoice: [.sms, .voice, .voice]
        case .smsSMSVoice: [.sms, .sms, .voice]
        case .email: [.email]
        }
    }

    public var usesEmail: Bool { steps.contains(.email) }

    /// A single channel as a one-step workflow.
    public init(channel: DeliveryChannel) {
        switch channel {
        case .sms: self = .sms
        case .voice: self = .voice
        case .email: self = .email
        }
    }
}

/// Why a code is asked for. A `login` code is a second factor: at least 6 digits, never by e-mail,
/// and a public check lifts the session to aal 2. A `phone_proof` code goes to a number its user
/// has not proved yet: the only code such a number gets; checked, it proves the number (and,
/// being a code that reached the phone, counts as the login factor too).
public enum Purpose: String, Sendable {
    case login
    case transaction
    case phoneProof = "phone_proof"

    /// Codes that stand for the user's presence at the phone: at least 6 digits, never e-mail,
    /// and checked through a session.
    var isPhoneFactor: Bool { self == .login || self == .phoneProof }
}
