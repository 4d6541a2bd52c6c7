import ServiceKit

/// What `latchkey --help` and `latchkey COMMAND --help` print.
enum ToolUsage {
    static let overview = """
        usage: latchkey COMMAND [OPTIONS]     (latchkey COMMAND --help for its options)

          up [--demo] [--base-port P] [--postgres URL] [--replicas N]
                                            run the whole stack on 127.0.0.1:P..P+4 (default 7400), HTTP door on P+80
          call METHOD ['{"json":"params"}'] one request to the gateway, the answer on stdout
          bench SCENARIO                    measure: ping, login, verify, transfer, reset, all; passkey, overload, long, postgres, memory (not in all)
          backup SOURCE.sqlite DEST.sqlite  online backup of a live service database
          options                           every configuration variable, as a Markdown table
          app-attest-check --root FILE      check App Attest attestations and assertions, one JSON case a line on stdin
          gateway | identity | verification | accounts | reset [OPTIONS]
                                            run that service (the same as its own executable or link; SERVICE --help)

        operator commands (straight to identity and accounts; --json for JSON; each recorded as operator.*):
          deposit USERNAME ACCOUNT AMOUNT_MINOR   fund checking or saving (idempotent: --idempotency-key)
          unlock USERNAME                   lift a login lock and forgive the failed logins
          sessions USERNAME                 the user's live sessions
          revoke-session USERNAME (SESSION_ID | --all)
          keys USERNAME                     the user's device keys
          revoke-key USERNAME KEY_ID
          activity USERNAME [--limit N]     the user's audit events, newest first
          deletions [USER_ID]               account deletions not finished (blocked: money left)
          settle-deletion USER_ID           pay a blocked deletion's balances out, then let it go on

        a stack moved with `up --base-port P`: give call, bench and the operator commands --base-port P too,
        or export LATCHKEY_BASE_PORT=P once for all of them (an explicit address still wins)

        exit status: 0 done, 1 an error answer or a failure, 2 a usage error, 3 the stack could not be reached

        """

    static func of(_ command: String) -> String? {
        switch command {
        case "up": Usage.text("latchkey up [--demo] [--base-port P | --listen HOST:PORT] [--data-dir DIR] [--postgres URL] [--replicas N]", options: UpCommand.options + [CommonOptions.dataDirectory, CommonOptions.listen])
        case "call": Usage.text("latchkey call METHOD ['{\"json\":\"params\"}'] [--gateway [tls://]HOST:PORT | --base-port P] [--tls] [--tls-ca FILE]", options: CallCommand.options)
        case "bench": Usage.text("latchkey bench SCENARIO   (ping, login, verify, transfer, reset, all; passkey: usernameless passkey sign-ins through the gateway beside bare P-256 verifications and the commit rate; overload: logins at 3x scrypt; long: login, verify, transfer on a preloaded history vs empty; postgres --postgres URL: logins with 1 and 2 identity replicas, transfers; memory: idle resident memory of each process and the gateway's per 1,000 idle connections (--connections, default 4000); none of these five in all)", options: BenchCommand.options)
        case "backup": Usage.text("latchkey backup SOURCE.sqlite DEST.sqlite", options: [])
        case "options": Usage.text("latchkey options", options: [])
        case "app-attest-check": Usage.text("latchkey app-attest-check --root FILE   (cases as JSON lines on stdin, answers on stdout)", options: [AppAttestCheckCommand.root])
        default: OperatorCommands.usage(command)
        }
    }
}
