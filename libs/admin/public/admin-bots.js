// The Bots tab's cards: a bot's state, its outbound budgets and pauses, its pull routes,
// the last hour's charts and the webhook buttons. Needs admin-kit.js and admin-charts.js.
(function () {
  'use strict';

  var kit = window.RelaygramAdmin;
  var el = kit.el;
  var say = kit.say;
  var api = kit.api;
  var fail = kit.fail;
  var badge = kit.badge;
  var fields = kit.fields;
  var when = kit.when;

  function botCard(bot) {
    var webhook = bot.webhook || {};
    var out = el('pre', { hidden: true });
    var card = el(
      'article',
      { class: 'card bot', 'data-id': bot.id },
      el(
        'h3',
        null,
        bot.id,
        badge(bot.healthy, 'healthy', 'unhealthy'),
        el('span', { class: 'badge warn' }, bot.mode),
      ),
      bot.problem ? el('p', { class: 'problem' }, bot.problem) : null,
      fields([
        ['polling', bot.mode === 'polling' ? (bot.polling ? 'yes' : 'no') : null],
        ['state', bot.state],
        ['queued', bot.queue],
        ['dead letters', bot.dead],
        ['username', bot.username ? '@' + bot.username : null],
        ['webhook url', webhook.url],
        ['expected url', webhook.expected_url],
        ['pending at Telegram', webhook.pending_update_count],
        ['last webhook error', webhook.last_error_message],
        ['last error at', webhook.last_error_date ? when(webhook.last_error_date) : null],
        ['poller lease', bot.poller ? (bot.poller.leased ? 'held' : 'free') : null],
        ['offset', bot.poller ? bot.poller.offset : null],
      ]),
      bot.outbound ? outboundSection(bot.outbound) : null,
      bot.pull_routes && bot.pull_routes.length ? pullSection(bot.pull_routes) : null,
      kit.chartBlock('bot', bot.id),
    );
    var actions = el(
      'div',
      { class: 'actions' },
      el(
        'button',
        {
          type: 'button',
          class: 'secondary',
          onclick: function () {
            webhookCall('GET', bot.id, out);
          },
        },
        'Webhook info',
      ),
    );
    if (bot.mode === 'webhook') {
      actions.appendChild(
        el(
          'button',
          {
            type: 'button',
            onclick: function () {
              if (confirm('Call setWebhook for ' + bot.id + ' with the configured URL and secret?'))
                webhookCall('POST', bot.id, out);
            },
          },
          'Set webhook',
        ),
      );
    }
    card.appendChild(actions);
    card.appendChild(out);
    return card;
  }

  // The bot's send budgets and the pauses Telegram's 429s set.
  function outboundSection(outbound) {
    var pacing = outbound.pacing;
    var section = el(
      'section',
      { class: 'outbound' },
      el(
        'h4',
        null,
        'Outbound pacing',
        el(
          'span',
          { class: 'badge ' + (pacing === 'shared' ? 'ok' : pacing === 'off' ? 'warn' : 'bad') },
          pacing,
        ),
      ),
      fields([
        ['per bot', outbound.per_second + ' / s'],
        ['per chat', outbound.per_chat_per_second + ' / s, burst ' + outbound.chat_burst],
        ['per group', outbound.per_group_per_minute + ' / min'],
        ['longest wait', outbound.max_wait_ms / 1000 + ' s'],
        ['broadcast share', outbound.broadcast_share + ' (reserved)'],
        [
          'bot paused',
          outbound.pause
            ? 'until ' + when(outbound.pause.until) + ' (' + outbound.pause.retry_after + ' s)'
            : 'no',
        ],
        ['chats paused', outbound.paused_chats_total],
      ]),
    );
    if (outbound.paused_chats.length) {
      var list = el('ul', { class: 'paused-chats' });
      outbound.paused_chats.forEach(function (chat) {
        list.appendChild(
          el(
            'li',
            null,
            'chat ' + chat.chat + ': ' + chat.retry_after + ' s, until ' + when(chat.until),
          ),
        );
      });
      section.appendChild(list);
    }
    return section;
  }

  // Long-polling bots behind pull routes: what waits for them, and whether they still poll.
  function pullSection(routes) {
    var list = el('ul', { class: 'paused-chats' });
    routes.forEach(function (route) {
      list.appendChild(
        el(
          'li',
          { 'data-route': route.route },
          route.route +
            ' (client ' +
            route.client +
            '): ' +
            (route.pending === null ? '?' : route.pending) +
            ' pending, last polled ' +
            (route.last_polled_at ? when(route.last_polled_at) : 'never') +
            ' ',
          badge(!route.stale, 'ok', 'stale'),
        ),
      );
    });
    return el('section', { class: 'outbound pull-routes' }, el('h4', null, 'Pull routes'), list);
  }

  function webhookCall(method, id, out) {
    say(method === 'POST' ? 'Setting the webhook…' : 'Asking Telegram…');
    return api(method, '/bots/' + encodeURIComponent(id) + '/webhook')
      .then(function (info) {
        out.hidden = false;
        out.textContent = JSON.stringify(info, null, 2);
        say(method === 'POST' ? 'Webhook set for ' + id + '.' : '');
      })
      .catch(fail);
  }

  kit.botCard = botCard;
})();
