// The Outbox tab's failed sends: dead letters of the outbox's route (`_outbox`), with the
// send's method and chat, Telegram's error, Re-send and Delete; and the tab's loading
// (broadcasts from admin-broadcasts.js, loaded before this). Needs admin-kit.js.
(function () {
  'use strict';

  var kit = window.RelaygramAdmin;
  var $ = kit.$;
  var el = kit.el;
  var say = kit.say;
  var api = kit.api;
  var fail = kit.fail;
  var fields = kit.fields;
  var when = kit.when;

  var OUTBOX_ROUTE = kit.OUTBOX_ROUTE;
  var PAGE = 20;

  var outboxCursor = null;

  function telegramSaid(letter) {
    var code = letter.last_status ? letter.last_status + ' ' : '';
    return code + (letter.last_error || '');
  }

  function outboxCard(letter) {
    var call = letter.update && typeof letter.update === 'object' ? letter.update : {};
    var params = call.params && typeof call.params === 'object' ? call.params : {};
    var id = letter.delivery_id;
    var card = el(
      'article',
      {
        class: 'card outbox-failure',
        'data-id': id,
        'data-method': call.method,
        'data-chat': params.chat_id,
        'data-error-code': letter.last_status,
      },
      el(
        'h3',
        null,
        call.method || '?',
        el('span', { class: 'badge bad' }, letter.reason),
        el('span', { class: 'muted' }, letter.bot),
      ),
      fields([
        ['chat', params.chat_id],
        ['Telegram said', telegramSaid(letter)],
        ['attempts', letter.attempts],
        ['failed', when(letter.dead_at)],
        ['handed over', when(letter.accepted_at)],
        ['send id', id],
      ]),
      el(
        'details',
        null,
        el('summary', null, 'Call'),
        el('pre', null, JSON.stringify(call, null, 2)),
      ),
    );
    var resend = el(
      'button',
      {
        type: 'button',
        class: 'resend',
        'aria-label': 'Re-send outbox send ' + id,
        onclick: function () {
          outboxAction(
            resend,
            'POST',
            '/dead-letters/' + encodeURIComponent(id) + '/replay',
            card,
            'Re-sent',
          );
        },
      },
      'Re-send',
    );
    var remove = el(
      'button',
      {
        type: 'button',
        class: 'danger delete',
        'aria-label': 'Delete outbox send ' + id,
        onclick: function () {
          if (confirm('Delete this failed send? It cannot be re-sent afterwards.'))
            outboxAction(
              remove,
              'DELETE',
              '/dead-letters/' + encodeURIComponent(id),
              card,
              'Deleted',
            );
        },
      },
      'Delete',
    );
    card.appendChild(el('div', { class: 'actions' }, resend, remove));
    return card;
  }

  function outboxAction(button, method, apiPath, card, done) {
    button.disabled = true;
    return api(method, apiPath)
      .then(function () {
        var message = done + ' ' + card.getAttribute('data-id') + '.';
        card.remove();
        if ($('outbox-failures').children.length) return say(message);
        return loadOutboxFailures(true).then(function () {
          say(message);
        });
      })
      .catch(function (error) {
        button.disabled = false;
        fail(error);
      });
  }

  function loadOutboxFailures(fresh) {
    if (fresh) outboxCursor = null;
    var query = '?route=' + OUTBOX_ROUTE + '&limit=' + PAGE;
    if (outboxCursor) query += '&cursor=' + encodeURIComponent(outboxCursor);
    return api('GET', '/dead-letters' + query)
      .then(function (page) {
        var list = $('outbox-failures');
        var cards = page.items.map(outboxCard);
        if (fresh) kit.replaceChildren(list, cards, 'No outbox send failed.');
        else
          cards.forEach(function (card) {
            list.appendChild(card);
          });
        outboxCursor = page.next_cursor;
        $('outbox-more').hidden = !outboxCursor;
      })
      .catch(fail);
  }

  function loadOutbox() {
    say('Loading broadcasts and outbox failures…');
    return Promise.all([kit.refreshBroadcasts(), loadOutboxFailures(true)]).then(function () {
      if (!$('status').classList.contains('error')) say('');
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    $('outbox-more').addEventListener('click', function () {
      loadOutboxFailures(false);
    });
  });

  kit.loadOutbox = loadOutbox;
})();
