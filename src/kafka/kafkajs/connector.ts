/** The client library's and the commands' Kafka client (src/kafka/transport/connection.ts) on kafkajs. */
import type { Connector } from '../transport/connection';
import { kafkajsAdmin } from './admin';
import { kafkajsClient } from './client';
import { classify } from './errorTypes';
import { kafkajsIdempotentProducer, kafkajsPlainProducer } from './plainProducer';
import { kafkajsTopicConsumer } from './topicConsumer';

export const kafkajsConnector: Connector = {
  connect(options) {
    const kafka = kafkajsClient(options);
    return {
      admin: () => kafkajsAdmin(kafka.admin()),
      idempotentProducer: (log) => kafkajsPlainProducer(kafkajsIdempotentProducer(kafka), log),
      topicConsumer: (o) => kafkajsTopicConsumer(kafka, o),
    };
  },
  classify,
};
