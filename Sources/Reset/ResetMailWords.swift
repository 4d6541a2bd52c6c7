import Delivery

/// The words of reset's two mails to an account (the link, and the notice after a reset) in
/// each language account mails are written in. An address without an account has no language:
/// its notice stays English (`ResetMailComposer.unknownAddress`).
struct ResetMailWords: Sendable {
    let locale: MailLocale
    let product: String

    struct LinkMail {
        let subject, hello, request, expiry, ignore, fallback, button, closing: String
        /// The duration inside `expiry`, emphasised in the HTML part.
        let validFor: String
    }

    func linkMail(validFor seconds: Int64, opensInABrowser: Bool) -> LinkMail {
        let validFor = locale.duration(seconds: seconds)
        switch locale {
        case .english:
            return LinkMail(
                subject: "Reset your \(product) password", hello: "Hello,",
                request: "We received a request to reset the password of your \(product) account.\nOpen this link on your phone to choose a new password:",
                expiry: "The link works once and expires in \(validFor).",
                ignore: "If you did not ask for this, ignore this e-mail: your password stays as it is and nobody can change it without this link. "
                    + "If such mails keep coming, tell us.",
                fallback: opensInABrowser
                    ? "If the button does not work, copy this address into your browser:"
                    : "If the button does not work, open this e-mail on the phone where the \(product) app is installed, or copy this address there:",
                button: "Choose a new password", closing: product, validFor: validFor)
        case .french:
            return LinkMail(
                subject: "Réinitialisez votre mot de passe \(product)", hello: "Bonjour,",
                request: "Nous avons reçu une demande de réinitialisation du mot de passe de votre compte \(product).\n"
                    + "Ouvrez ce lien sur votre téléphone pour choisir un nouveau mot de passe :",
                expiry: "Ce lien n'est utilisable qu'une seule fois et expire dans \(validFor).",
                ignore: "Si vous n'êtes pas à l'origine de cette demande, ignorez cet e-mail : votre mot de passe reste inchangé et personne "
                    + "ne peut le modifier sans ce lien. Si ces e-mails se répètent, prévenez-nous.",
                fallback: opensInABrowser
                    ? "Si le bouton ne fonctionne pas, copiez cette adresse dans votre navigateur :"
                    : "Si le bouton ne fonctionne pas, ouvrez cet e-mail sur le téléphone où l'application \(product) est installée, "
                        + "ou copiez-y cette adresse :",
                button: "Choisir un nouveau mot de passe", closing: product, validFor: validFor)
        case .russian:
            return LinkMail(
                subject: "Сброс пароля \(product)", hello: "Здравствуйте!",
                request: "Мы получили запрос на сброс пароля вашего аккаунта \(product).\nОткройте эту ссылку на телефоне, чтобы задать новый пароль:",
                expiry: "Ссылка одноразовая, срок её действия — \(validFor).",
                ignore: "Если вы не запрашивали сброс, просто проигнорируйте это письмо: пароль останется прежним, и без этой ссылки "
                    + "его никто не изменит. Если такие письма приходят снова и снова, сообщите нам.",
                fallback: opensInABrowser
                    ? "Если кнопка не работает, скопируйте этот адрес в браузер:"
                    : "Если кнопка не работает, откройте это письмо на телефоне, где установлено приложение \(product), или скопируйте туда этот адрес:",
                button: "Задать новый пароль", closing: product, validFor: validFor)
        }
    }

    /// After a completed reset, naming the factors it removed (`totp`, `recovery_codes`).
    func passwordChanged(removedFactors: [String]) -> (subject: String, text: String) {
        switch locale {
        case .english:
            let removed = removedFactors.compactMap { ["totp": "the authenticator app", "recovery_codes": "the recovery codes"][$0] }
            let removal = removed.isEmpty ? "" : "\n\nBecause they were set up in the last days before the reset, "
                + "\(removed.joined(separator: " and ")) of your account \(removed.count == 1 ? "was" : "were") removed too, in case someone "
                + "else added them: set them up again in the app if they were yours."
            return ("Your \(product) password was changed", """
                Hello,

                The password of your \(product) account was just changed with a reset link. \
                Every device was signed out, every biometric (Face ID / Touch ID) login was turned \
                off, and no device is remembered any more: sign in again with the new password and \
                a code, then turn biometric login back on in the app.\(removal)

                If you did not do this, reset your password at once from the app and contact us: \
                someone may have access to your e-mail.

                \(product)
                """)
        case .french:
            let removed = removedFactors.compactMap { ["totp": "l'application d'authentification", "recovery_codes": "les codes de secours"][$0] }
            let removal = removed.isEmpty ? "" : "\n\nComme \(removed.count == 1 ? "elle avait été configurée" : "ils avaient été configurés") "
                + "dans les jours précédant la réinitialisation, \(removed.joined(separator: " et ")) de votre compte "
                + "\(removed.count == 1 ? "a" : "ont") également été \(removed.count == 1 ? "supprimé(e)" : "supprimés"), au cas où quelqu'un "
                + "d'autre les aurait ajoutés : configurez-les à nouveau dans l'application s'ils étaient les vôtres."
            return ("Le mot de passe de votre compte \(product) a été modifié", """
                Bonjour,

                Le mot de passe de votre compte \(product) vient d'être modifié à l'aide d'un lien de \
                réinitialisation. Tous les appareils ont été déconnectés, toute connexion biométrique \
                (Face ID / Touch ID) a été désactivée et plus aucun appareil n'est mémorisé : reconnectez-vous \
                avec le nouveau mot de passe et un code, puis réactivez la connexion biométrique dans l'application.\(removal)

                Si vous n'êtes pas à l'origine de ce changement, réinitialisez immédiatement votre mot de passe \
                depuis l'application et contactez-nous : quelqu'un a peut-être accès à votre messagerie.

                \(product)
                """)
        case .russian:
            let removed = removedFactors.compactMap { ["totp": "приложение-аутентификатор", "recovery_codes": "коды восстановления"][$0] }
            let removal = removed.isEmpty ? "" : "\n\nТак как это было настроено в последние дни перед сбросом, из вашего аккаунта также "
                + "удалено: \(removed.joined(separator: " и ")) — на случай, если это добавил кто-то другой. Если это были вы, "
                + "настройте их снова в приложении."
            return ("Пароль \(product) изменён", """
                Здравствуйте!

                Пароль вашего аккаунта \(product) только что изменён по ссылке для сброса. Все устройства \
                вышли из аккаунта, вход по Face ID / Touch ID отключён, и ни одно устройство больше не \
                запомнено: войдите снова с новым паролем и кодом, затем снова включите вход по биометрии \
                в приложении.\(removal)

                Если это были не вы, немедленно сбросьте пароль в приложении и свяжитесь с нами: возможно, \
                у кого-то есть доступ к вашей почте.

                \(product)
                """)
        }
    }
}
