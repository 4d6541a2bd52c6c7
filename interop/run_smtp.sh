#!/usr/bin/env bash
# SMTP interop: the Swift SMTP client and the reset service against a real SMTP server
# (Python aiosmtpd: plain, STARTTLS, smtps, AUTH PLAIN/LOGIN), mails parsed with `email`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 interop/smtp_check.py --skip-build
