import Contract
import Delivery
import LineProtocol
import Platform
import RPC
import Secrets

/// The work after the answer: the mail workers take jobs from the durable queue and do them.
/// At-least-once: a job a stop cut short is done again after the restart. A reset link redone
/// issues a fresh token (the earlier one is superseded), so in the rare case that the first
/// mail did leave, only the newest link works.
extension ResetService {
    enum JobOutcome: Equatable {
        case done
        /// Worth another try later (identity down, the mail server busy, the database locked).
        case retry
        /// Will never work (a permanent mail error): given up now.
        case failed
    }

    /// Queues a job (admitted by `rules`) and wakes the mail workers. Throws `unavailable` when the
    /// database cannot take it: the answer must not promise what nothing will do.
    func queue(_ job: ResetJob, rules: [RateRule], context: CallContext) throws(RPCError) -> JobAdmission {
        let admission: JobAdmission
        do {
            admission = try store.admitAndQueue(rules, job, maxQueued: settings.maxQueuedJobs, nowMilliseconds: nowMilliseconds())
        } catch {
            context.logger.error("reset job not queued", ["error": .string(String(describing: error))])
            throw RPCError(.unavailable, "password reset is unavailable right now; try again shortly")
        }
        if admission == .queued { jobQueued.fire() }
        return admission
    }

    /// On start: jobs a killed process was running go back to the queue (SQLite; on
    /// PostgreSQL their leases end instead, see `ResetJobQueue`).
    public func requeueInterruptedJobs() throws {
        let requeued = try store.requeueInterruptedJobs()
        if requeued > 0 { logger.warning("redoing reset jobs interrupted by a stop", ["reset.requeued": .int(Int64(requeued))]) }
    }

    /// Takes one due job and does it. Blocking (identity, SQLite, mail): mail workers only.
    /// False when nothing was due.
    @discardableResult
    public func runNextJob() -> Bool {
        let job: ResetJob
        do {
            let now = nowMilliseconds()
            guard let claimed = try store.claimDueJob(nowMilliseconds: now, leaseUntilMilliseconds: now + settings.jobLeaseMilliseconds) else { return false }
            job = claimed
        } catch {
            logger.error("reset job queue failed", ["error": .string(String(describing: error))])
            return false
        }
        let context = CallContext(
            method: job.kind == .resetLink ? "reset.request" : "reset.complete", requestID: job.requestID, client: job.client,
            logger: logger.with(["reset.job": .string(job.kind.rawValue), "reset.attempt": .int(Int64(job.attempts))]),
            deadlineMilliseconds: MonotonicClock.nowMilliseconds() + 30_000)
        let outcome = job.kind == .resetLink ? sendResetLink(to: job.address ?? "", context: context) : sendPasswordChanged(job, context: context)
        finish(job, outcome, context: context)
        return true
    }

    private func finish(_ job: ResetJob, _ outcome: JobOutcome, context: CallContext) {
        do {
            if outcome == .retry && job.attempts < settings.jobAttempts {
                let backoff = min(60_000, settings.jobBackoffMilliseconds << Int64(min(job.attempts - 1, 20)))
                try store.retryJob(id: job.id, at: nowMilliseconds() + backoff)
                metrics.increment("reset.job_retried")
                return
            }
            try store.removeJob(id: job.id)
            if outcome != .done {
                metrics.increment("reset.request_failed")
                context.logger.error("reset job given up")
            }
        } catch {
            // The job stays marked running: the next start does it again.
            context.logger.error("reset job outcome not stored", ["error": .string(String(describing: error))])
        }
    }

    /// Lookup, token, mail. The mail goes to the address identity has on file, never to the
    /// text typed in the request: a look-alike address that normalizes to the same account gets nothing.
    private func sendResetLink(to address: String, context: CallContext) -> JobOutcome {
        do {
            guard let userID = try backgroundIdentity.findUser(email: address, context: context),
                let recipient = try backgroundIdentity.recipient(userID: userID, context: context)
            else {
                metrics.increment("reset.unknown_address")
                context.logger.info("reset request for an address without an account")
                guard settings.notifyUnknownAddresses else { return .done }
                return send(composer.unknownAddress(to: address), kind: "unknown_address", context: context)
            }
            let token = OpaqueToken.make(prefix: "lkr_")
            let hash = OpaqueToken.hash(token)
            let now = nowMilliseconds()
            let superseded = try store.issue(tokenHash: hash, userID: userID, nowMilliseconds: now, expiresAtMilliseconds: now + settings.tokenTTLSeconds * 1000)
            metrics.increment("reset.issued")
            context.logger.info("reset token issued", [
                "user.id": .string(userID), "reset.token_ref": .string(Self.reference(hash)), "reset.superseded": .int(Int64(superseded)),
            ])
            return send(
                composer.resetLink(to: recipient.email, locale: recipient.locale, token: token, validForSeconds: settings.tokenTTLSeconds),
                kind: "reset_link", context: context)
        } catch {
            context.logger.warning("reset request not done yet", ["error": .string(String(describing: error))])
            return .retry
        }
    }

    /// The audit event (on the first try only: a retry must not record it twice) and the notice.
    private func sendPasswordChanged(_ job: ResetJob, context: CallContext) -> JobOutcome {
        let userID = job.userID ?? ""
        let log = context.logger.with(["user.id": .string(userID)])
        if job.attempts == 1 {
            do throws(RPCError) {
                _ = try backgroundIdentity.callAndWait(IdentityInternalContract.record, ["user_id": .string(userID), "event": "password.reset", "outcome": "success"], context: context)
            } catch {
                log.warning("audit record failed", ["error.reason": .string(error.reasonText ?? "error")])
            }
        }
        do throws(RPCError) {
            guard let recipient = try backgroundIdentity.recipient(userID: userID, context: context) else { return .done }
            return send(
                composer.passwordChanged(to: recipient.email, locale: recipient.locale, removedFactors: job.removedFactors),
                kind: "password_changed", context: context)
        } catch {
            log.warning("password changed notice not sent yet", ["error.reason": .string(error.reasonText ?? "error")])
            return .retry
        }
    }

    private func send(_ message: OutgoingMessage, kind: StaticString, context: CallContext) -> JobOutcome {
        do {
            try mail.deliver(message)
            metrics.increment("reset.mail_sent")
            context.logger.info("reset mail sent", ["mail.kind": .string(kind.description), "delivery.provider": .string(mail.name)])
            return .done
        } catch {
            metrics.increment("reset.mail_failed")
            context.logger.error("reset mail failed", [
                "mail.kind": .string(kind.description), "delivery.provider": .string(error.provider),
                "delivery.permanent": .bool(error.permanent), "error": .string(error.detail),
            ])
            return error.permanent ? .failed : .retry
        }
    }
}
