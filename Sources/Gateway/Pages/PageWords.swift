/// Every string the pages show, one catalogue per language.
struct PageWords: Sendable {
    let languageLabel: String
    // The reset form.
    let resetTitle: String
    let resetIntro: String
    let newPassword: String
    let repeatPassword: String
    let passwordHint: String
    let resetSubmit: String
    let passwordsDiffer: String
    let resetDoneTitle: String
    let resetDone: String
    // A link that does not work, and a new one.
    let linkBrokenTitle: String
    let linkBroken: String
    let emailLabel: String
    let newLinkSubmit: String
    let newLinkSentTitle: String
    let newLinkSent: String
    // The account's mailed links.
    let verifyTitle: String
    let verifyIntro: String
    let verifySubmit: String
    let verifyDone: String
    let confirmChangeTitle: String
    let confirmChangeIntro: String
    let confirmChangeSubmit: String
    let confirmChangeDone: String
    let revertTitle: String
    let revertIntro: String
    let revertSubmit: String
    let revertDone: String
    let accountLinkBroken: String
    let tryAgain: String
    let unavailable: String
    /// The password policy's rules (`weak_password`'s `rule`), in this language; the server's
    /// own words where a rule is not listed.
    let passwordRules: [String: String]

    static let english = PageWords(
        languageLabel: "Language",
        resetTitle: "Choose a new password",
        resetIntro: "Type your new password twice. Every device signed in to your account will be signed out.",
        newPassword: "New password", repeatPassword: "The same password again",
        passwordHint: "Long and yours alone: a few words you will remember work well. The server also refuses passwords known from breaches.",
        resetSubmit: "Set the new password", passwordsDiffer: "The two passwords are not the same.",
        resetDoneTitle: "Your password was changed",
        resetDone: "You can sign in with it now, in the app or here. If you did not ask for this, contact us at once.",
        linkBrokenTitle: "This link does not work",
        linkBroken: "It was used already, it expired, or a newer one replaced it. Ask for a new link: we will mail it if an account uses this address.",
        emailLabel: "E-mail address", newLinkSubmit: "Send me a new link",
        newLinkSentTitle: "Check your mail", newLinkSent: "If an account uses this address, a new link is on its way. It works for a short time, once.",
        verifyTitle: "Confirm your e-mail address", verifyIntro: "Confirm that this address is yours, so that we can reach you about your account.",
        verifySubmit: "Confirm my address", verifyDone: "Thank you: your address is confirmed.",
        confirmChangeTitle: "Confirm your new e-mail address", confirmChangeIntro: "Confirm that your account's mail should come to this address from now on.",
        confirmChangeSubmit: "Use this address", confirmChangeDone: "Done: your account now uses this address.",
        revertTitle: "Undo the e-mail change", revertIntro: "If you did not change your account's address, put the old one back: every device will be signed out.",
        revertSubmit: "Put my old address back", revertDone: "Your old address is back and every session has ended. Sign in again and change your password.",
        accountLinkBroken: "This link does not work: it was used already, it expired, or a newer one replaced it. The app can mail you a new one.",
        tryAgain: "Please try again.", unavailable: "The service is busy or unavailable. Please try again in a moment.",
        passwordRules: [
            "too_short": "This password is too short.", "too_long": "This password is too long.",
            "breached": "This password is known from a data breach: choose another.", "common": "This password is too common.",
            "contains_username": "The password must not contain your username.", "contains_email": "The password must not contain your e-mail address.",
            "repetitive": "This password repeats itself too much.", "sequence": "This password is a sequence (like 12345678).",
        ])

    static let french = PageWords(
        languageLabel: "Langue",
        resetTitle: "Choisissez un nouveau mot de passe",
        resetIntro: "Saisissez deux fois votre nouveau mot de passe. Tous les appareils connectés à votre compte seront déconnectés.",
        newPassword: "Nouveau mot de passe", repeatPassword: "Le même mot de passe, à nouveau",
        passwordHint: "Long et rien qu'à vous : quelques mots dont vous vous souviendrez conviennent bien. Le serveur refuse aussi les mots de passe connus par des fuites.",
        resetSubmit: "Enregistrer le nouveau mot de passe", passwordsDiffer: "Les deux mots de passe ne sont pas identiques.",
        resetDoneTitle: "Votre mot de passe a été changé",
        resetDone: "Vous pouvez vous connecter avec lui dès maintenant, dans l'application ou ici. Si vous n'êtes pas à l'origine de cette demande, contactez-nous sans attendre.",
        linkBrokenTitle: "Ce lien ne fonctionne pas",
        linkBroken: "Il a déjà servi, il a expiré ou un lien plus récent l'a remplacé. Demandez-en un nouveau : nous l'enverrons si un compte utilise cette adresse.",
        emailLabel: "Adresse e-mail", newLinkSubmit: "M'envoyer un nouveau lien",
        newLinkSentTitle: "Consultez vos e-mails", newLinkSent: "Si un compte utilise cette adresse, un nouveau lien est en route. Il fonctionne peu de temps, une seule fois.",
        verifyTitle: "Confirmez votre adresse e-mail", verifyIntro: "Confirmez que cette adresse est la vôtre, pour que nous puissions vous écrire au sujet de votre compte.",
        verifySubmit: "Confirmer mon adresse", verifyDone: "Merci : votre adresse est confirmée.",
        confirmChangeTitle: "Confirmez votre nouvelle adresse e-mail", confirmChangeIntro: "Confirmez que les e-mails de votre compte doivent désormais arriver à cette adresse.",
        confirmChangeSubmit: "Utiliser cette adresse", confirmChangeDone: "C'est fait : votre compte utilise désormais cette adresse.",
        revertTitle: "Annuler le changement d'adresse", revertIntro: "Si vous n'avez pas changé l'adresse de votre compte, remettez l'ancienne : tous les appareils seront déconnectés.",
        revertSubmit: "Remettre mon ancienne adresse", revertDone: "Votre ancienne adresse est revenue et toutes les sessions sont terminées. Reconnectez-vous et changez votre mot de passe.",
        accountLinkBroken: "Ce lien ne fonctionne pas : il a déjà servi, il a expiré ou un lien plus récent l'a remplacé. L'application peut vous en envoyer un nouveau.",
        tryAgain: "Veuillez réessayer.", unavailable: "Le service est occupé ou indisponible. Veuillez réessayer dans un instant.",
        passwordRules: [
            "too_short": "Ce mot de passe est trop court.", "too_long": "Ce mot de passe est trop long.",
            "breached": "Ce mot de passe est connu par une fuite de données : choisissez-en un autre.", "common": "Ce mot de passe est trop courant.",
            "contains_username": "Le mot de passe ne doit pas contenir votre nom d'utilisateur.",
            "contains_email": "Le mot de passe ne doit pas contenir votre adresse e-mail.",
            "repetitive": "Ce mot de passe se répète trop.", "sequence": "Ce mot de passe est une suite (comme 12345678).",
        ])

    static let russian = PageWords(
        languageLabel: "Язык",
        resetTitle: "Новый пароль",
        resetIntro: "Введите новый пароль дважды. Все устройства, на которых выполнен вход в ваш аккаунт, будут отключены.",
        newPassword: "Новый пароль", repeatPassword: "Тот же пароль ещё раз",
        passwordHint: "Длинный и только ваш: хорошо подходят несколько слов, которые вы запомните. Сервер также отклоняет пароли, известные по утечкам.",
        resetSubmit: "Сохранить новый пароль", passwordsDiffer: "Пароли не совпадают.",
        resetDoneTitle: "Пароль изменён",
        resetDone: "Теперь можно войти с ним в приложении или здесь. Если вы этого не запрашивали, немедленно свяжитесь с нами.",
        linkBrokenTitle: "Ссылка не работает",
        linkBroken: "Ею уже воспользовались, срок её действия истёк или её заменила более новая. Запросите новую ссылку: мы отправим её, если этот адрес указан в аккаунте.",
        emailLabel: "Адрес электронной почты", newLinkSubmit: "Отправить новую ссылку",
        newLinkSentTitle: "Проверьте почту", newLinkSent: "Если этот адрес указан в аккаунте, новая ссылка уже в пути. Она действует недолго и только один раз.",
        verifyTitle: "Подтвердите адрес электронной почты", verifyIntro: "Подтвердите, что этот адрес ваш, чтобы мы могли писать вам об аккаунте.",
        verifySubmit: "Подтвердить адрес", verifyDone: "Спасибо: адрес подтверждён.",
        confirmChangeTitle: "Подтвердите новый адрес", confirmChangeIntro: "Подтвердите, что письма по аккаунту теперь должны приходить на этот адрес.",
        confirmChangeSubmit: "Использовать этот адрес", confirmChangeDone: "Готово: теперь аккаунт использует этот адрес.",
        revertTitle: "Отменить смену адреса", revertIntro: "Если вы не меняли адрес аккаунта, верните прежний: все устройства будут отключены.",
        revertSubmit: "Вернуть прежний адрес", revertDone: "Прежний адрес возвращён, все сеансы завершены. Войдите снова и смените пароль.",
        accountLinkBroken: "Ссылка не работает: ею уже воспользовались, срок её действия истёк или её заменила более новая. Приложение может отправить новую.",
        tryAgain: "Попробуйте ещё раз.", unavailable: "Сервис занят или недоступен. Попробуйте ещё раз через минуту.",
        passwordRules: [
            "too_short": "Пароль слишком короткий.", "too_long": "Пароль слишком длинный.",
            "breached": "Этот пароль известен по утечке данных: выберите другой.", "common": "Этот пароль слишком распространён.",
            "contains_username": "Пароль не должен содержать имя пользователя.", "contains_email": "Пароль не должен содержать адрес электронной почты.",
            "repetitive": "В пароле слишком много повторов.", "sequence": "Пароль — это последовательность (например, 12345678).",
        ])
}
