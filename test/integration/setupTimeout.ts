// Real services: consumer-group joins, transactions and first registry calls take seconds.
jest.setTimeout(120_000);
